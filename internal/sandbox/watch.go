package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The server's watchdog.
//
// While a run lives, the server (never a process in the sandbox, which
// the program could stop or kill) checks its memory every watchEvery and
// ends the whole run past Limits.TotalMemory: with per-run cgroups, at the
// first process the kernel killed at the cgroup's limit; without, when the
// memory it sums from outside the sandbox goes past the limit: the
// resident memory of every process of the run (the descendants of the
// sandbox's first process: an orphan is given to that process, so none
// leaves the tree), the memfds they hold, and what the files of the run's
// tmpfs mounts (/tmp, /dev/shm) take.

// watchEvery is how often the watchdog looks.
const watchEvery = 20 * time.Millisecond

// watchdog watches one run.
type watchdog struct {
	over chan struct{} // closed when the run went past its memory
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// watch starts watching the run whose first process ns reports, with
// cgroups rc (nil: none), against total bytes.
func watch(ns *nsInit, rc *runCgroup, total int64) *watchdog {
	w := &watchdog{over: make(chan struct{}), stop: make(chan struct{})}
	w.wg.Go(func() {
		if rc == nil {
			select {
			case <-ns.ready:
			case <-w.stop:
				return
			}
			if ns.pid <= 0 {
				return // bwrap did not start it
			}
		}
		page := int64(os.Getpagesize())
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
			if (rc != nil && rc.oomKills() > 0) || (rc == nil && runMemory(ns.pid, page) > total) {
				close(w.over)
				return
			}
		}
	})
	return w
}

// end stops the watchdog and reports whether the run went past its memory.
func (w *watchdog) end() bool {
	w.once.Do(func() { close(w.stop) })
	w.wg.Wait()
	select {
	case <-w.over:
		return true
	default:
		return false
	}
}

// runMemory is the memory held by the run whose first process is root
// (a host PID): the resident memory of its descendants, the memfds they
// hold, and the files of the sandbox's tmpfs mounts (read through the
// root of a descendant: there are none before the sandbox is made).
func runMemory(root int, page int64) int64 {
	var sum int64
	seen := map[[2]uint64]bool{} // memfds by device and inode
	procs := descendants(root)
	for _, pid := range procs {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm"); err == nil {
			if f := strings.Fields(string(b)); len(f) > 1 {
				rss, _ := strconv.ParseInt(f[1], 10, 64)
				sum += rss * page
			}
		}
		sum += memfds(pid, seen)
	}
	if len(procs) > 0 && inSandbox(procs[0]) {
		for _, m := range []string{"/tmp", "/dev/shm"} {
			var st syscall.Statfs_t
			if syscall.Statfs("/proc/"+strconv.Itoa(procs[0])+"/root"+m, &st) == nil {
				sum += int64(st.Blocks-st.Bfree) * st.Bsize
			}
		}
	}
	return sum
}

// inSandbox reports whether pid's root is not the server's (bwrap's first
// process has the host's until it has made the sandbox's: the host's /tmp
// is not the run's).
func inSandbox(pid int) bool {
	var host, its syscall.Stat_t
	if syscall.Stat("/", &host) != nil || syscall.Stat("/proc/"+strconv.Itoa(pid)+"/root", &its) != nil {
		return false
	}
	return host.Dev != its.Dev || host.Ino != its.Ino
}

// descendants are the PIDs of every descendant of root, from the
// children of each of their threads.
func descendants(root int) []int {
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(p) + "/task")
		if err != nil {
			continue // gone
		}
		for _, t := range tasks {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/task/" + t.Name() + "/children")
			if err != nil {
				continue
			}
			for f := range strings.FieldsSeq(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
					queue = append(queue, c)
				}
			}
		}
	}
	return out
}

// memfds is what the memfds pid holds take, those in seen aside (added).
func memfds(pid int, seen map[[2]uint64]bool) int64 {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var sum int64
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if l, err := os.Readlink(p); err != nil || !strings.HasPrefix(l, "/memfd:") {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(p, &st) != nil {
			continue
		}
		k := [2]uint64{st.Dev, st.Ino}
		if !seen[k] {
			seen[k] = true
			sum += st.Blocks * 512
		}
	}
	return sum
}
