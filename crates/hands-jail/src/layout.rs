//! An episode's files on the host: its home, workspace and scratch directories, a generated
//! minimal `/etc`, and the marker the janitor reads to clean up after a hands that died.
//!
//! Issue 17 item 3 ("A private filesystem").

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// The name, uid and home of the one user inside every jail.
pub const JAIL_USER: &str = "user";
/// The uid (and gid) of that user inside the jail.
pub const JAIL_UID: u32 = 1000;
/// Home inside the jail.
pub const JAIL_HOME: &str = "/home/user";
/// The workspace inside the jail.
pub const JAIL_WORKSPACE: &str = "/workspace";
/// Where the scratch directory (shared with hands) is inside the jail.
pub const JAIL_SCRATCH: &str = "/scratch";
/// Where the init program is inside the jail.
pub const JAIL_INIT: &str = "/.hands-init";

/// Host `/etc` entries every jail sees read-only: what programs need to link, draw text, find
/// their configuration and trust certificates. Nothing that names users' secrets (`shadow`,
/// `ssh`, `sudoers`, private keys) and no host identity (`machine-id`, `hostname`).
pub const HOST_ETC: &[&str] = &[
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "fonts",
    "ssl/certs",
    "ca-certificates",
    "ca-certificates.conf",
    "xdg",
    "X11",
    "gtk-2.0",
    "gtk-3.0",
    "mime.types",
    "localtime",
    "locale.alias",
    "chromium",
    "chromium.d",
    "bash.bashrc",
    "inputrc",
    "profile",
    "debian_version",
    "os-release",
    "magic",
    "magic.mime",
    "ImageMagick-6",
    "gai.conf",
    "host.conf",
    "dconf",
    "glvnd",
    "vulkan",
    "pulse",
];

/// Files generated for the jail's `/etc` (name, contents).
pub fn generated_etc(host_uid: u32) -> Vec<(&'static str, String)> {
    let _ = host_uid;
    vec![
        (
            "passwd",
            format!(
                "root:x:0:0:root:/root:/usr/sbin/nologin\n{JAIL_USER}:x:{JAIL_UID}:{JAIL_UID}:hands episode:{JAIL_HOME}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
            ),
        ),
        (
            "group",
            format!("root:x:0:\n{JAIL_USER}:x:{JAIL_UID}:\nnogroup:x:65534:\n"),
        ),
        ("hostname", "hands\n".to_owned()),
        (
            "hosts",
            "127.0.0.1\tlocalhost hands\n::1\tlocalhost ip6-localhost ip6-loopback\n".to_owned(),
        ),
        // No resolver: names are resolved by hands' proxy, for allowed hosts only. A program
        // that ignores the proxy variables asks 127.0.0.1:53, where nothing answers.
        (
            "resolv.conf",
            "# hands: no DNS inside the jail; the network is reached through HTTP(S)_PROXY\nnameserver 127.0.0.1\noptions timeout:1 attempts:1\n".to_owned(),
        ),
        ("nsswitch.conf", "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n".to_owned()),
        ("machine-id", "68616e64736a61696c6d616368696e65\n".to_owned()),
    ]
}

/// The host directories of one episode.
#[derive(Debug)]
pub struct EpisodeDirs {
    /// The episode's directory (removed with the jail).
    pub root: PathBuf,
    /// Home, bound at [`JAIL_HOME`].
    pub home: PathBuf,
    /// The workspace, bound at [`JAIL_WORKSPACE`] (the operator's directory when bound).
    pub workspace: PathBuf,
    /// Scratch, bound at [`JAIL_SCRATCH`].
    pub scratch: PathBuf,
    /// The generated `/etc` files.
    pub etc: PathBuf,
}

/// Where episodes' directories are made: `$HANDS_JAIL_DIR`, else `<temp>/hands-jails`.
pub fn base_dir() -> PathBuf {
    std::env::var_os("HANDS_JAIL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("hands-jails"))
}

fn mkdir(path: &Path, mode: u32) -> io::Result<()> {
    fs::DirBuilder::new()
        .mode(mode)
        .create(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// Creates the directories of episode `name`, owned by `uid`.
/// Mounts a tmpfs of `size` bytes owned by `uid` on `dir` (root only); whether it did.
fn mount_capped(dir: &Path, uid: u32, size: u64) -> io::Result<bool> {
    // SAFETY: geteuid takes no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(false);
    }
    let target = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| io::Error::other("a path with a NUL"))?;
    let options = std::ffi::CString::new(format!("size={size},mode=0700,uid={uid},gid={uid}"))
        .map_err(|_| io::Error::other("options with a NUL"))?;
    // SAFETY: every pointer is a NUL-terminated string that outlives the call.
    let rc = unsafe {
        libc::mount(
            c"hands-episode".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            options.as_ptr().cast(),
        )
    };
    if rc != 0 {
        return Err(io::Error::new(
            io::Error::last_os_error().kind(),
            format!(
                "mounting a tmpfs on {}: {}",
                dir.display(),
                io::Error::last_os_error()
            ),
        ));
    }
    Ok(true)
}

/// Detaches a mount at `dir`, if there is one (the tmpfs of a capped episode directory).
pub fn unmount(dir: &Path) {
    if let Ok(target) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) {
        // SAFETY: a NUL-terminated path; MNT_DETACH needs nothing else.
        unsafe {
            libc::umount2(target.as_ptr(), libc::MNT_DETACH);
        }
    }
}

/// Creates the directories of episode `name`, owned by `uid`; home, scratch and (unless
/// bound) the workspace are tmpfs mounts of `dir_size` bytes each when hands is root (whether
/// they are is the second value).
pub fn create(
    name: &str,
    uid: u32,
    bound_workspace: Option<&Path>,
    dir_size: u64,
) -> io::Result<(EpisodeDirs, bool)> {
    let base = base_dir();
    if !base.exists() {
        fs::create_dir_all(&base)?;
        // Others may pass through to their own episode's directory, not list the others.
        fs::set_permissions(&base, fs::Permissions::from_mode(0o711))?;
    }
    let root = base.join(name);
    mkdir(&root, 0o711)?;
    // The owner's pid and start time first: the janitor removes an episode once that process is
    // gone, and leaves alone one whose mark is not written yet (see `janitor::sweep`).
    fs::write(
        root.join("owner"),
        owner_mark(std::process::id()).unwrap_or_default(),
    )?;
    let dirs = EpisodeDirs {
        home: root.join("home"),
        workspace: bound_workspace
            .map(Path::to_path_buf)
            .unwrap_or_else(|| root.join("workspace")),
        scratch: root.join("scratch"),
        etc: root.join("etc"),
        root,
    };
    let mut capped = true;
    let mut own = vec![&dirs.home, &dirs.scratch];
    if bound_workspace.is_none() {
        own.push(&dirs.workspace);
    }
    for dir in own {
        mkdir(dir, 0o700)?;
        capped &= mount_capped(dir, uid, dir_size)?;
        chown(dir, uid)?;
    }
    mkdir(&dirs.etc, 0o755)?;
    for (name, text) in generated_etc(uid) {
        fs::write(dirs.etc.join(name), text)?;
    }
    Ok((dirs, capped))
}

/// Changes a path's owner (and group) to `uid` when we are root; a no-op otherwise.
pub fn chown(path: &Path, uid: u32) -> io::Result<()> {
    // SAFETY: geteuid takes no arguments and cannot fail.
    #[allow(unsafe_code)]
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::chown(path, Some(uid), Some(uid))
            .map_err(|e| io::Error::new(e.kind(), format!("chown {}: {e}", path.display())))?;
    }
    Ok(())
}

/// Changes the owner (and group) of `path` itself, never of what a symlink there points to, to
/// `uid` when we are root; a no-op otherwise.
pub fn lchown(path: &Path, uid: u32) -> io::Result<()> {
    // SAFETY: geteuid takes no arguments and cannot fail.
    #[allow(unsafe_code)]
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::lchown(path, Some(uid), Some(uid))
            .map_err(|e| io::Error::new(e.kind(), format!("lchown {}: {e}", path.display())))?;
    }
    Ok(())
}

/// "PID STARTTIME" of a process (start time in clock ticks since boot, field 22 of `stat`),
/// which tells a live owner from a reused pid.
pub fn owner_mark(pid: u32) -> Option<String> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let start = after.split_whitespace().nth(19)?;
    Some(format!("{pid} {start}"))
}

/// Whether the process an owner mark names is still the one alive.
pub fn owner_alive(mark: &str) -> bool {
    let Some(pid) = mark
        .split_whitespace()
        .next()
        .and_then(|p| p.parse::<u32>().ok())
    else {
        return false;
    };
    owner_mark(pid).as_deref() == Some(mark.trim())
}
