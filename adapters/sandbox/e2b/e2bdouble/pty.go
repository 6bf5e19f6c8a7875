package e2bdouble

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"unsafe"
)

// The double's terminals are Linux pseudo-terminals opened with three
// ioctls, rather than through a PTY library: the double ships in the
// workbench's module, and a library here would sit in the module graph of
// every program that imports the workbench.

// startPTY starts cmd (with attrs) on a new pseudo-terminal of cols×rows
// as its controlling terminal and stdin, stdout and stderr, and returns
// the terminal's master side.
func startPTY(cmd *exec.Cmd, attrs *syscall.SysProcAttr, cols, rows uint16) (*os.File, error) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	slave, err := openSlave(master)
	if err != nil {
		master.Close()
		return nil, err
	}
	defer slave.Close() // the child holds its own copies
	if err := resize(master, cols, rows); err != nil {
		master.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	attrs.Setsid, attrs.Setctty, attrs.Ctty = true, true, 0 // the child's stdin is the terminal
	cmd.SysProcAttr = attrs
	if err := cmd.Start(); err != nil {
		master.Close()
		return nil, err
	}
	return master, nil
}

// openSlave unlocks the master's terminal and opens its slave side.
func openSlave(master *os.File) (*os.File, error) {
	var unlock int32
	if err := ioctl(master, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		return nil, err
	}
	var n uint32
	if err := ioctl(master, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		return nil, err
	}
	return os.OpenFile("/dev/pts/"+strconv.FormatUint(uint64(n), 10), os.O_RDWR|syscall.O_NOCTTY, 0)
}

// resize sets a terminal's size.
func resize(master *os.File, cols, rows uint16) error {
	ws := struct{ rows, cols, x, y uint16 }{rows: rows, cols: cols}
	return ioctl(master, syscall.TIOCSWINSZ, unsafe.Pointer(&ws))
}

func ioctl(f *os.File, req uint, arg unsafe.Pointer) error {
	conn, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	if err := conn.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(req), uintptr(arg))
	}); err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}
