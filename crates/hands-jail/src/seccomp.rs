//! The seccomp filter every jailed program runs under: a deny list of the calls and socket
//! families that reach past the jail's namespaces or widen the kernel's attack surface.
//!
//! Namespaces fence most of the machine, but not all of it: `AF_VSOCK` is not namespaced (from
//! an empty network namespace it reached the hypervisor side of this VM, measured), `io_uring`
//! makes sockets and opens without the syscalls a filter sees, `TIOCSTI` pushes keystrokes into
//! a terminal the jail shares, and `bpf`, `perf_event_open`, `userfaultfd`, the key ring and
//! module loading are kernel surface no desktop program needs. A denied call fails with `EPERM`
//! (nothing is killed: a program that probes degrades as it would under Docker's profile).
//!
//! Spec: claude-computer-use-tool, precaution 1 ("privilegios mínimos"); issue 17 item 1.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as ArgLen, SeccompCmpOp as Op, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};

/// Why the filter could not be built.
#[derive(Debug, thiserror::Error)]
#[error("could not build the seccomp filter: {0}")]
pub struct SeccompError(String);

/// Which jail a filter is for: the browser's keeps user namespaces (Chromium's own sandbox
/// nests one); every other jail also loses `unshare`/`setns`/`mount`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterKind {
    /// The desktop, the shell and the apps the model starts.
    Desktop,
    /// Chromium alone, which builds its own sandbox inside.
    Browser,
}

/// Socket families a jailed program may open: unix, IPv4, IPv6 (reaching only the jail's
/// loopback) and netlink's route protocol (which sees only the jail's own network namespace;
/// glibc asks it for the interfaces).
pub const ALLOWED_FAMILIES: [i32; 4] = [
    libc::AF_UNIX,
    libc::AF_INET,
    libc::AF_INET6,
    libc::AF_NETLINK,
];

/// Calls denied in every jail.
const DENIED_CALLS: &[i64] = &[
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_acct,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_syslog,
    libc::SYS_quotactl,
    libc::SYS_lookup_dcookie,
    libc::SYS_fanotify_init,
    libc::SYS_iopl,
    libc::SYS_ioperm,
];

/// Calls denied in the desktop jail only (Chromium's sandbox needs them for itself).
const DENIED_OUTSIDE_BROWSER: &[i64] = &[
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_setns,
    libc::SYS_unshare,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
];

fn cond(arg: u8, len: ArgLen, op: Op, value: u64) -> Result<SeccompCondition, SeccompError> {
    SeccompCondition::new(arg, len, op, value).map_err(|e| SeccompError(e.to_string()))
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, SeccompError> {
    SeccompRule::new(conditions).map_err(|e| SeccompError(e.to_string()))
}

/// Rules matching a family argument (`arg`) outside [`ALLOWED_FAMILIES`], and netlink with
/// any protocol but route (0) when `protocol_arg` is given.
fn family_rules(arg: u8, protocol_arg: Option<u8>) -> Result<Vec<SeccompRule>, SeccompError> {
    let mut allowed: Vec<u64> = ALLOWED_FAMILIES.iter().map(|f| *f as u64).collect();
    allowed.sort_unstable();
    let mut rules = Vec::new();
    // Every gap between allowed families, and everything above the last one.
    let mut low = 0u64;
    for family in &allowed {
        if *family > low {
            rules.push(rule(vec![
                cond(arg, ArgLen::Dword, Op::Ge, low)?,
                cond(arg, ArgLen::Dword, Op::Lt, *family)?,
            ])?);
        }
        low = family + 1;
    }
    rules.push(rule(vec![cond(arg, ArgLen::Dword, Op::Ge, low)?])?);
    if let Some(protocol) = protocol_arg {
        rules.push(rule(vec![
            cond(arg, ArgLen::Dword, Op::Eq, libc::AF_NETLINK as u64)?,
            cond(protocol, ArgLen::Dword, Op::Ne, 0)?,
        ])?);
    }
    Ok(rules)
}

fn target_arch() -> Result<TargetArch, SeccompError> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|e| SeccompError(e.to_string()))
}

/// The filter for `kind`, compiled to classic BPF.
pub fn program(kind: FilterKind) -> Result<BpfProgram, SeccompError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in DENIED_CALLS {
        rules.insert(*call, Vec::new());
    }
    if kind == FilterKind::Desktop {
        for call in DENIED_OUTSIDE_BROWSER {
            rules.insert(*call, Vec::new());
        }
    }
    rules.insert(libc::SYS_socket, family_rules(0, Some(2))?);
    rules.insert(libc::SYS_socketpair, family_rules(0, None)?);
    // Terminal injection: pushing bytes into a terminal's input queue, and the console's
    // selection paste. The request is the low 32 bits of the second argument.
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(
                1,
                ArgLen::Dword,
                Op::MaskedEq(0xffff_ffff),
                libc::TIOCSTI,
            )?])?,
            rule(vec![cond(
                1,
                ArgLen::Dword,
                Op::MaskedEq(0xffff_ffff),
                libc::TIOCLINUX,
            )?])?,
        ],
    );
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        target_arch()?,
    )
    .map_err(|e| SeccompError(e.to_string()))?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| SeccompError(e.to_string()))
}

/// The filter as the bytes `bwrap --seccomp FD` reads (the raw `sock_filter` array).
pub fn program_bytes(kind: FilterKind) -> Result<Vec<u8>, SeccompError> {
    let program = program(kind)?;
    let mut bytes = Vec::with_capacity(program.len() * 8);
    for instruction in &program {
        bytes.extend_from_slice(&instruction.code.to_ne_bytes());
        bytes.push(instruction.jt);
        bytes.push(instruction.jf);
        bytes.extend_from_slice(&instruction.k.to_ne_bytes());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_filters_compile_to_whole_instructions() {
        for kind in [FilterKind::Desktop, FilterKind::Browser] {
            let bytes = program_bytes(kind).unwrap();
            assert!(!bytes.is_empty());
            assert_eq!(bytes.len() % 8, 0);
        }
        assert!(
            program(FilterKind::Desktop).unwrap().len()
                > program(FilterKind::Browser).unwrap().len()
        );
    }
}
