//! A jail as its programs see it: who they are, what they can see, what they can reach.

mod common;

use common::{jail, sh};
use hands_jail::{JailKind, Launcher as _};

#[test]
fn a_jailed_program_is_an_unprivileged_user_in_a_private_world() {
    let jail = jail(JailKind::Desktop);
    let (out, err, code) = sh(
        &jail,
        "id -u; id -g; hostname; echo $HOME; pwd; ls /; cat /proc/self/status | grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):'",
    );
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        &lines[..5],
        &["1000", "1000", "hands", "/home/user", "/"],
        "{out}"
    );
    assert!(out.contains("CapEff:\t0000000000000000"), "{out}");
    assert!(out.contains("CapBnd:\t0000000000000000"), "{out}");
    assert!(out.contains("Seccomp:\t2"), "{out}");
    assert!(!out.contains("\nroot\n"), "no /root: {out}");
    // On the host, the jail runs as the episode's uid (as root) or the caller's.
    let host_uid = jail.host_uid();
    // SAFETY: geteuid cannot fail.
    #[allow(unsafe_code)]
    let me = unsafe { libc::geteuid() };
    if me == 0 {
        assert!(host_uid >= 3_000_000, "{host_uid}");
    } else {
        assert_eq!(host_uid, me);
    }
}

#[test]
fn the_network_is_loopback_only_and_a_listener_from_inside_reaches_hands() {
    let jail = jail(JailKind::Desktop);
    let listener = jail.listen_tcp(hands_jail::PROXY_PORT).unwrap();
    let server = std::thread::spawn(move || {
        use std::io::{Read as _, Write as _};
        let (mut stream, _) = listener.accept().unwrap();
        let mut buf = [0u8; 5];
        stream.read_exact(&mut buf).unwrap();
        stream.write_all(b"pong\n").unwrap();
        buf
    });
    let (out, err, code) = sh(
        &jail,
        "cat /sys/class/net/*/operstate 2>/dev/null | wc -l; ls /sys/class/net 2>/dev/null; exec 3<>/dev/tcp/127.0.0.1/3128; printf 'ping\\n' >&3; head -1 <&3",
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.ends_with("pong\n"), "{out}");
    assert_eq!(&server.join().unwrap(), b"ping\n");
}

#[test]
fn a_disk_bomb_in_home_fills_the_episodes_cap_not_the_hosts_disk() {
    let mut config = hands_jail::JailConfig::new(JailKind::Desktop);
    config.init = common::init();
    config.limits.dir_size = 16 << 20;
    let jail = hands_jail::Jail::start(&config).unwrap();
    let (out, _err, _code) = sh(
        &jail,
        "i=0; while head -c 1048576 /dev/zero > $HOME/f$i 2>/dev/null; do i=$((i+1)); [ $i -ge 64 ] && break; done; du -sm $HOME | cut -f1",
    );
    let written_mib: u64 = out.trim().parse().unwrap_or(u64::MAX);
    if rustix::process::geteuid().is_root() {
        assert!(
            written_mib <= 16,
            "{written_mib} MiB written past a 16 MiB cap"
        );
        assert!(
            jail.limits_in_force().contains("16 MiB each"),
            "{}",
            jail.limits_in_force()
        );
    } else {
        // Only root can mount the capped tmpfs; the limits say so instead of claiming a cap.
        assert!(
            jail.limits_in_force().contains("not capped"),
            "{}",
            jail.limits_in_force()
        );
    }
}
