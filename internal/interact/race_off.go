//go:build !race

package interact

const raceBuild = false
