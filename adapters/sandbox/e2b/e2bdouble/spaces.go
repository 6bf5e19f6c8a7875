package e2bdouble

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// A sandbox's processes are told apart by mount namespace: the helper
// gives each process the daemon starts a namespace of its own, and
// everything that process starts inherits it — whatever group or session
// it moves to — while nothing else on this machine is in it. That is how
// killAll ends what a VM going away would end, without process groups
// (which envd does not make) or a PID namespace (which would kill a
// command's children with it and hide what envd leaves running).

// track holds the mount namespace of a process the sandbox started and
// returns its inode. The namespace file stays open while the sandbox may
// still kill by it, so its inode cannot be reused by another namespace
// meanwhile.
func (b *box) track(pid int) (uint64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/ns/mnt", pid))
	if err != nil {
		return 0, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spaces == nil {
		b.spaces = map[uint64]*os.File{}
	}
	if old := b.spaces[st.Ino]; old != nil {
		old.Close()
	}
	b.spaces[st.Ino] = f
	return st.Ino, nil
}

// release lets go of a namespace nothing runs in any more.
func (b *box) release(ns uint64) {
	b.mu.Lock()
	f := b.spaces[ns]
	b.mu.Unlock()
	if f == nil || len(members(map[uint64]*os.File{ns: f})) > 0 {
		return
	}
	b.mu.Lock()
	if b.spaces[ns] == f {
		delete(b.spaces, ns)
		f.Close()
	}
	b.mu.Unlock()
}

// killIn kills every process in the namespaces, again until none is left
// (a process may fork while the first pass runs).
func killIn(spaces map[uint64]*os.File) {
	if len(spaces) == 0 {
		return
	}
	self := os.Getpid()
	for range 20 {
		pids := members(spaces)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			if pid != self {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(10 * time.Millisecond) // the killed let go of the namespace as they exit
	}
}

// members lists the live processes in the namespaces (a zombie has none
// any more).
func members(spaces map[uint64]*os.File) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat("/proc/"+e.Name()+"/ns/mnt", &st) != nil {
			continue
		}
		if _, ok := spaces[st.Ino]; ok {
			out = append(out, pid)
		}
	}
	return out
}
