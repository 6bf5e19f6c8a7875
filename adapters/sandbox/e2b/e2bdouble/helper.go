package e2bdouble

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
)

// helperArg marks a re-execution of the double's program as the helper
// that sets up a sandbox process's view of the machine.
const helperArg = "__e2b_double_sandbox__"

// RunHelperIfAsked turns this process into the sandbox helper when it was
// started as one, and never returns then. Every program that runs a
// Double — a test binary (from TestMain) or cmd/e2b-double — calls it
// first thing, since the double re-executes its own program.
func RunHelperIfAsked() {
	if len(os.Args) < 5 || os.Args[1] != helperArg {
		return
	}
	if err := enterSandbox(os.Args[2], os.Args[3], os.Args[4:]); err != nil {
		fmt.Fprintln(os.Stderr, "e2b-double:", err)
		os.Exit(126)
	}
}

// namespaceAttrs start the helper in a mount namespace of its own: as
// root directly, otherwise inside a user namespace mapping this user to
// root.
func namespaceAttrs() *syscall.SysProcAttr {
	if os.Geteuid() == 0 {
		return &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	}
	return &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
	}
}

// gateFD is the helper's descriptor 3: a pipe it reads to its end before
// executing the command, so that the double can take hold of the
// process's namespace first. Every start of the helper passes one.
const gateFD = 3

// enterSandbox builds the sandbox's root — this machine's system
// directories, read-only, with the sandbox's own /workspace, /tmp, /root
// and /home — changes into it, waits at the gate and executes the
// command.
func enterSandbox(boxDir, cwd string, argv []string) error {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mounts private: %w", err)
	}
	root := filepath.Join(boxDir, "root")
	if err := syscall.Mount("tmpfs", root, "tmpfs", 0, "size=8m,mode=755"); err != nil {
		return fmt.Errorf("mounting the sandbox's root: %w", err)
	}
	for _, d := range []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "opt"} {
		src := "/" + d
		fi, err := os.Lstat(src)
		if err != nil {
			continue
		}
		dst := filepath.Join(root, d)
		if fi.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, dst); err != nil {
				return err
			}
			continue
		}
		if err := bind(src, dst, true); err != nil {
			return err
		}
	}
	for _, d := range []string{"dev", "proc"} {
		if err := bind("/"+d, filepath.Join(root, d), false); err != nil {
			return err
		}
	}
	for _, d := range []string{"workspace", "tmp", "root", "home"} {
		if err := bind(filepath.Join(boxDir, "fs", d), filepath.Join(root, d), false); err != nil {
			return err
		}
	}
	if err := syscall.Chroot(root); err != nil {
		return fmt.Errorf("entering the sandbox's root: %w", err)
	}
	if err := os.Chdir(cwd); err != nil {
		return fmt.Errorf("the working directory %s: %w", cwd, err)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	gate := os.NewFile(gateFD, "gate")
	_, _ = io.Copy(io.Discard, gate)
	gate.Close()
	return syscall.Exec(path, argv, os.Environ())
}

// bind mounts src at dst (made first), read-only when asked (best
// effort: a user namespace may refuse the remount).
func bind(src, dst string, readOnly bool) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if err := syscall.Mount(src, dst, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("binding %s: %w", src, err)
	}
	if readOnly {
		_ = syscall.Mount("", dst, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY|syscall.MS_REC, "")
	}
	return nil
}

var (
	supportedOnce sync.Once
	supportedErr  error
)

// Supported says whether this machine lets the double give its processes
// a private mount namespace (root, or unprivileged user namespaces) — nil
// when it does. It tries once.
func Supported() error {
	supportedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "e2b-double-probe-")
		if err != nil {
			supportedErr = err
			return
		}
		defer os.RemoveAll(dir)
		for _, sub := range []string{"root", "fs/workspace", "fs/tmp", "fs/root", "fs/home"} {
			if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
				supportedErr = err
				return
			}
		}
		self, err := os.Executable()
		if err != nil {
			supportedErr = err
			return
		}
		gate, open, err := os.Pipe()
		if err != nil {
			supportedErr = err
			return
		}
		open.Close()
		defer gate.Close()
		cmd := exec.Command(self, helperArg, dir, "/workspace", "sh", "-c", "test \"$(pwd)\" = /workspace")
		cmd.SysProcAttr = namespaceAttrs()
		cmd.ExtraFiles = []*os.File{gate}
		if out, err := cmd.CombinedOutput(); err != nil {
			supportedErr = fmt.Errorf("a sandbox process could not start (%v): %s (the program must call e2bdouble.RunHelperIfAsked first)", err, out)
		}
	})
	return supportedErr
}
