package sandbox

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"
)

// The seccomp filter every process of a confined invocation runs under
// (installed by the init before it starts the command, inherited by all
// descendants, unremovable). It refuses, with EPERM:
//   - ptrace(PTRACE_ATTACH) and ptrace(PTRACE_SEIZE): no debugger attaches
//     to a running process (the CLI serving the role, or any other); a
//     debugger may still start a program itself (PTRACE_TRACEME), so an
//     agent can debug what it builds;
//   - process_vm_readv, process_vm_writev and pidfd_getfd: no reading,
//     writing or taking another process's memory or files;
//   - ioctl TIOCSTI and TIOCLINUX: no faking terminal input (there is no
//     terminal in reach either: this is a second wall);
//   - a setuid or setgid bit in a mode it sets (chmod, fchmod, fchmodat,
//     fchmodat2) or creates with (open, openat, creat, mkdir, mkdirat,
//     mknod, mknodat): a writable path may be root's on disk (an idmapped
//     view), so such a file would be a root-owned setuid program on the
//     host; and openat2 and io_uring_setup (ENOSYS), whose modes a filter
//     cannot read, so callers fall back to the calls above;
//   - every system call of a foreign ABI (i386, x32), whose numbers the
//     checks above do not cover.
//
// Yama would refuse attaching to non-descendants, but it is a boot-time
// LSM many kernels lack; a filter works wherever no_new_privs does.

const (
	seccompRetAllow  = 0x7fff0000
	seccompRetErrno  = 0x00050000
	seccompModeFilt  = 2
	bpfLdAbsW        = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeqK          = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJgeK          = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfJsetK         = 0x45 // BPF_JMP | BPF_JSET | BPF_K
	bpfRetK          = 0x06 // BPF_RET | BPF_K
	auditArchX86_64  = 0xc000003e
	auditArchAarch64 = 0xc00000b7
	ptraceAttach     = 16
	ptraceSeize      = 0x4206
	ioctlTIOCSTI     = 0x5412
	ioctlTIOCLINUX   = 0x541c
	x32SyscallBit    = 0x40000000
	modeSetID        = 0o6000 // S_ISUID | S_ISGID
)

type sockFilter struct {
	code uint16
	jt   uint8
	jf   uint8
	k    uint32
}

type sockFprog struct {
	len    uint16
	filter *sockFilter
}

// syscallNumbers are this architecture's numbers for the filter.
type syscallNumbers struct {
	arch                                       uint32
	ptrace, ioctl, vmRead, vmWrite, pidfdGetfd uint32
	// modeArgs maps each call that sets or creates with a mode to the
	// index of its mode argument.
	modeArgs []modeArg
	// unreadable are calls whose modes sit where a filter cannot look.
	unreadable []uint32
}

// modeArg is a system call and the index of its mode argument.
type modeArg struct{ nr, arg uint32 }

func archNumbers() (syscallNumbers, error) {
	const fchmodat2, openat2, ioUringSetup = 452, 437, 425 // same on both
	switch runtime.GOARCH {
	case "amd64":
		return syscallNumbers{auditArchX86_64, 101, 16, 310, 311, 438,
			[]modeArg{{90, 1}, {91, 1}, {268, 2}, {fchmodat2, 2}, {2, 2}, {257, 3}, {85, 1},
				{83, 1}, {258, 2}, {133, 1}, {259, 2}},
			[]uint32{openat2, ioUringSetup}}, nil
	case "arm64":
		return syscallNumbers{auditArchAarch64, 117, 29, 270, 271, 438,
			[]modeArg{{52, 1}, {53, 2}, {fchmodat2, 2}, {56, 3}, {34, 2}, {33, 2}},
			[]uint32{openat2, ioUringSetup}}, nil
	}
	return syscallNumbers{}, fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
}

// modeRules refuses n's mode-setting calls a setuid or setgid bit, and
// its unreadable calls outright. The accumulator holds the call's number
// on entry; a matched call is decided here (its argument overwrote it).
func modeRules(n syscallNumbers) []sockFilter {
	const offArgs = 16 // args[i]'s low 32 bits (little endian) at 16+8i
	deny := uint32(seccompRetErrno | uint32(syscall.EPERM))
	var prog []sockFilter
	for _, m := range n.modeArgs {
		prog = append(prog,
			sockFilter{bpfJeqK, 0, 4, m.nr},
			sockFilter{bpfLdAbsW, 0, 0, offArgs + 8*m.arg},
			sockFilter{bpfJsetK, 0, 1, modeSetID},
			sockFilter{bpfRetK, 0, 0, deny},
			sockFilter{bpfRetK, 0, 0, seccompRetAllow})
	}
	for _, nr := range n.unreadable {
		prog = append(prog,
			sockFilter{bpfJeqK, 0, 1, nr},
			sockFilter{bpfRetK, 0, 0, seccompRetErrno | uint32(syscall.ENOSYS)})
	}
	return prog
}

// confineFilter is the program described above.
func confineFilter(n syscallNumbers) []sockFilter {
	const (
		offNr   = 0
		offArch = 4
		offArg0 = 16 // low 32 bits (little endian)
		offArg1 = 24
	)
	deny := uint32(seccompRetErrno | uint32(syscall.EPERM))
	// Jumps are relative to the next instruction; the tail is:
	// ... ALLOW, DENY.
	prog := []sockFilter{
		{bpfLdAbsW, 0, 0, offArch},
		{bpfJeqK, 1, 0, n.arch},
		{bpfRetK, 0, 0, deny},
		{bpfLdAbsW, 0, 0, offNr},
	}
	if n.arch == auditArchX86_64 {
		prog = append(prog, sockFilter{bpfJgeK, 0, 1, x32SyscallBit}, sockFilter{bpfRetK, 0, 0, deny})
	}
	prog = append(prog,
		sockFilter{bpfJeqK, 0, 1, n.vmRead}, sockFilter{bpfRetK, 0, 0, deny},
		sockFilter{bpfJeqK, 0, 1, n.vmWrite}, sockFilter{bpfRetK, 0, 0, deny},
		sockFilter{bpfJeqK, 0, 1, n.pidfdGetfd}, sockFilter{bpfRetK, 0, 0, deny},
	)
	prog = append(prog, modeRules(n)...)
	prog = append(prog,
		// ptrace: look at the request.
		sockFilter{bpfJeqK, 0, 5, n.ptrace},
		sockFilter{bpfLdAbsW, 0, 0, offArg0},
		sockFilter{bpfJeqK, 2, 0, ptraceAttach},
		sockFilter{bpfJeqK, 1, 0, ptraceSeize},
		sockFilter{bpfRetK, 0, 0, seccompRetAllow},
		sockFilter{bpfRetK, 0, 0, deny},
		// ioctl: look at the request.
		sockFilter{bpfJeqK, 0, 5, n.ioctl},
		sockFilter{bpfLdAbsW, 0, 0, offArg1},
		sockFilter{bpfJeqK, 2, 0, ioctlTIOCSTI},
		sockFilter{bpfJeqK, 1, 0, ioctlTIOCLINUX},
		sockFilter{bpfRetK, 0, 0, seccompRetAllow},
		sockFilter{bpfRetK, 0, 0, deny},
		sockFilter{bpfRetK, 0, 0, seccompRetAllow},
	)
	return prog
}

// installFilter puts the calling thread (and what it starts) under the
// filter; no_new_privs must be set already.
func installFilter() error {
	n, err := archNumbers()
	if err != nil {
		return err
	}
	prog := confineFilter(n)
	fprog := sockFprog{len: uint16(len(prog)), filter: &prog[0]}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_SECCOMP, seccompModeFilt, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	runtime.KeepAlive(prog)
	return nil
}
