package sandbox

import (
	"bytes"
	"encoding/binary"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// The seccomp filter.
//
// bwrap loads it (--seccomp) before it starts the init, and every process
// of the run inherits it. It denies (ENOSYS) what would hold memory that
// no process's resident memory shows and the watchdog could not see
// without cgroups: SysV shared memory segments (shmget), which live on,
// mapped by no process, until the run's IPC namespace ends. It also
// denies every system call of another ABI (32-bit, x32), through which
// the same could be reached under other numbers.

// seccompFilter is the filter's program for this machine's architecture
// (amd64 or arm64), or nil for another, which runs without it.
func seccompFilter() []unix.SockFilter {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return nil
	}
	const (
		ldAbs   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq     = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge     = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret     = unix.BPF_RET | unix.BPF_K
		offNr   = 0 // struct seccomp_data: int nr; __u32 arch; ...
		offArch = 4
		x32Bit  = 0x40000000 // __X32_SYSCALL_BIT
		deny    = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	)
	// A jump's offsets count from the next instruction: deny is 6.
	return []unix.SockFilter{
		{Code: ldAbs, K: offArch},              // 0
		{Code: jeq, K: arch, Jt: 0, Jf: 4},     // 1: another ABI -> deny
		{Code: ldAbs, K: offNr},                // 2
		{Code: jge, K: x32Bit, Jt: 2, Jf: 0},   // 3: x32 -> deny
		{Code: jeq, K: unix.SYS_SHMGET, Jt: 1}, // 4: shmget -> deny
		{Code: ret, K: unix.SECCOMP_RET_ALLOW}, // 5
		{Code: ret, K: deny},                   // 6
	}
}

// seccompFile is a pipe's read end holding the filter for bwrap
// (--seccomp), or nil without one.
func seccompFile() (*os.File, error) {
	prog := seccompFilter()
	if prog == nil {
		return nil, nil
	}
	var b bytes.Buffer
	if err := binary.Write(&b, binary.NativeEndian, prog); err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// 56 bytes: within the pipe's buffer, so the write does not block.
	_, err = w.Write(b.Bytes())
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	return r, nil
}
