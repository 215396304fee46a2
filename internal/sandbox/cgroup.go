package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Per-run cgroups.
//
// Where the machine allows it, each run's processes are in cgroups of
// their own, made by the server for the run beneath the server's own
// cgroups (cgroup v1: the memory and pids hierarchies, and cpu when it is
// mounted): memory limited to Limits.TotalMemory (the kernel counts every
// page the run's processes hold, files of its tmpfs mounts, shared memory
// and memfds included, and kills within the run past it), pids to
// Limits.Procs plus the sandbox's own processes, and a CPU quota of
// Limits.CPUs. The run joins them before bwrap starts (joinMain), so no
// process of the run is ever outside them, and none can leave: the
// sandbox has no cgroup file system and its own cgroup namespace. The
// server reads the memory cgroup's count of OOM kills while the run lives
// and ends the whole run at the first.
//
// Without them (a server that is not root and has no delegated
// hierarchy, or cgroup v2 only: v2 is not used yet) the server's watchdog
// sums the run's memory itself (watch.go).

// cgroupRoots are a Sandbox's cgroup directories: one per hierarchy,
// named as its runs' directory, beneath the server's own cgroup.
type cgroupRoots struct {
	memory, pids string
	cpu          string // "" when the cpu hierarchy is not there
}

// cgroupSelf is where a process's cgroups and mounts are read:
// /proc/self/cgroup and /proc/self/mountinfo (a test may give others).
type cgroupSelf struct{ cgroup, mountinfo string }

// procSelf is this process's.
func procSelf() cgroupSelf { return cgroupSelf{"/proc/self/cgroup", "/proc/self/mountinfo"} }

// v1Dirs maps each cgroup v1 controller of this process to the directory
// of its cgroup: the hierarchy's mount point and the process's path in it
// (relative to the mount's root).
func v1Dirs(self cgroupSelf) (map[string]string, error) {
	paths := map[string]string{} // controller -> path in its hierarchy
	b, err := os.ReadFile(self.cgroup)
	if err != nil {
		return nil, err
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || f[1] == "" {
			continue // the v2 line ("0::/...")
		}
		for c := range strings.SplitSeq(f[1], ",") {
			paths[c] = f[2]
		}
	}
	mi, err := os.Open(self.mountinfo)
	if err != nil {
		return nil, err
	}
	defer func() { _ = mi.Close() }()
	dirs := map[string]string{}
	sc := bufio.NewScanner(mi)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 || qf[0] != "cgroup" {
			continue
		}
		root, mnt := pf[3], pf[4]
		for c := range strings.SplitSeq(qf[2], ",") {
			p, ok := paths[c]
			if !ok {
				continue
			}
			rel := p
			if root != "/" {
				if p != root && !strings.HasPrefix(p, root+"/") {
					continue // this process's cgroup is not under the mount
				}
				rel = strings.TrimPrefix(p, root)
			}
			dirs[c] = filepath.Join(mnt, rel)
		}
	}
	return dirs, sc.Err()
}

// newCgroupRoots makes a Sandbox's cgroup directories, named name, or
// says why it cannot (the caller then relies on the watchdog).
func newCgroupRoots(self cgroupSelf, name string) (*cgroupRoots, error) {
	dirs, err := v1Dirs(self)
	if err != nil {
		return nil, err
	}
	r := &cgroupRoots{}
	for _, c := range []struct {
		controller string
		dst        *string
		required   bool
	}{{"memory", &r.memory, true}, {"pids", &r.pids, true}, {"cpu", &r.cpu, false}} {
		d, ok := dirs[c.controller]
		if !ok {
			if c.required {
				r.remove()
				return nil, fmt.Errorf("no cgroup v1 %s hierarchy", c.controller)
			}
			continue
		}
		p := filepath.Join(d, name)
		if err := os.Mkdir(p, 0o755); err != nil {
			if c.required {
				r.remove()
				return nil, fmt.Errorf("cgroup v1 %s: %w", c.controller, err)
			}
			continue
		}
		*c.dst = p
	}
	return r, nil
}

// remove removes the directories (those of runs first).
func (r *cgroupRoots) remove() {
	for _, d := range []string{r.memory, r.pids, r.cpu} {
		if d == "" {
			continue
		}
		if ents, err := os.ReadDir(d); err == nil {
			for _, e := range ents {
				if e.IsDir() {
					_ = removeCgroup(filepath.Join(d, e.Name()))
				}
			}
		}
		_ = removeCgroup(d)
	}
}

// cpuPeriod is the CFS period of a run's CPU quota.
const cpuPeriod = 100 * time.Millisecond

// procsMargin is what the pids cgroup allows beyond Limits.Procs: bwrap's
// two processes and the init's threads.
const procsMargin = 24

// runCgroup is a run's cgroups.
type runCgroup struct {
	dirs   []string
	memory string
}

// newRun makes the cgroups of run id, limited as lim says.
func (r *cgroupRoots) newRun(id string, lim Limits) (*runCgroup, error) {
	rc := &runCgroup{}
	type setting struct{ file, value string }
	for _, c := range []struct {
		root string
		set  []setting
	}{
		{r.memory, []setting{{"memory.limit_in_bytes", strconv.FormatInt(lim.TotalMemory, 10)}, {"memory.memsw.limit_in_bytes", strconv.FormatInt(lim.TotalMemory, 10)}}},
		{r.pids, []setting{{"pids.max", strconv.Itoa(lim.Procs + procsMargin)}}},
		{r.cpu, []setting{{"cpu.cfs_period_us", strconv.FormatInt(cpuPeriod.Microseconds(), 10)},
			{"cpu.cfs_quota_us", strconv.FormatInt(int64(lim.CPUs*float64(cpuPeriod.Microseconds())), 10)}}},
	} {
		if c.root == "" {
			continue
		}
		d := filepath.Join(c.root, id)
		// The Sandbox's directory again, should something have removed it.
		if err := os.MkdirAll(d, 0o755); err != nil {
			rc.remove()
			return nil, fmt.Errorf("sandbox: make the run's cgroup: %w", err)
		}
		rc.dirs = append(rc.dirs, d)
		if c.root == r.memory {
			rc.memory = d
		}
		for _, s := range c.set {
			err := os.WriteFile(filepath.Join(d, s.file), []byte(s.value), 0)
			if errors.Is(err, os.ErrNotExist) && s.file == "memory.memsw.limit_in_bytes" {
				continue // no swap accounting: no swap to limit
			}
			if err != nil {
				rc.remove()
				return nil, fmt.Errorf("sandbox: set the run's cgroup %s: %w", s.file, err)
			}
		}
	}
	return rc, nil
}

// procsFiles are the files a process writes its PID to to join the run's
// cgroups.
func (rc *runCgroup) procsFiles() []string {
	out := make([]string, len(rc.dirs))
	for i, d := range rc.dirs {
		out[i] = filepath.Join(d, "cgroup.procs")
	}
	return out
}

// oomKills is how many of the run's processes the kernel killed at the
// memory limit.
func (rc *runCgroup) oomKills() int {
	b, err := os.ReadFile(filepath.Join(rc.memory, "memory.oom_control"))
	if err != nil {
		return 0
	}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("oom_kill ")); ok {
			n, _ := strconv.Atoi(string(bytes.TrimSpace(v)))
			return n
		}
	}
	return 0
}

// kill kills every process left in the run's cgroups.
func (rc *runCgroup) kill() {
	for _, d := range rc.dirs {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for f := range strings.FieldsSeq(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// remove kills what is left and removes the run's cgroups.
func (rc *runCgroup) remove() {
	for _, d := range rc.dirs {
		if err := removeCgroup(d); err != nil {
			rc.kill()
			_ = removeCgroup(d)
		}
	}
}

// removeCgroup removes a cgroup directory, waiting a little for the
// kernel to let its last processes go (rmdir fails with EBUSY until then).
func removeCgroup(d string) error {
	var err error
	for range 100 {
		if err = syscall.Rmdir(d); err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

// removeStaleCgroups removes the cgroups of the runs' directories a
// crashed server left (dirs, as removeStale returns them).
func removeStaleCgroups(dirs []string) {
	if len(dirs) == 0 {
		return
	}
	v1, err := v1Dirs(procSelf())
	if err != nil {
		return
	}
	for _, d := range dirs {
		name := filepath.Base(d)
		r := &cgroupRoots{}
		for c, dst := range map[string]*string{"memory": &r.memory, "pids": &r.pids, "cpu": &r.cpu} {
			if base, ok := v1[c]; ok {
				if st, err := os.Stat(filepath.Join(base, name)); err == nil && st.IsDir() {
					*dst = filepath.Join(base, name)
				}
			}
		}
		r.remove()
	}
}
