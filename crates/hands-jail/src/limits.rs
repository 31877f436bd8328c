//! Per-episode limits — processes, memory, CPU — and how they are enforced on this machine:
//! a cgroup v2 subtree where one is delegated to us, cgroup v1 hierarchies when we are root,
//! else resource limits on the jail's processes (the last resort), said so in the run's
//! metadata.
//!
//! Issue 17 item 5 ("Limits and lifetime").

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The limits of one episode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Most processes and threads at once (Chromium alone runs 100–200 threads).
    pub max_pids: u32,
    /// Most memory, bytes (tmpfs pages written inside count where a cgroup enforces it).
    pub max_memory: u64,
    /// CPU time, in cores (1.5 = one and a half cores' worth of time per period).
    pub cpu_cores: f64,
    /// Size of the private `/tmp`, bytes.
    pub tmp_size: u64,
    /// Size of the private `/dev/shm`, bytes.
    pub shm_size: u64,
    /// Largest file a program may write, bytes.
    pub max_file_size: u64,
    /// Size of each of the episode's home, workspace (unless bound) and scratch, bytes: each is
    /// a tmpfs of this size when hands runs as root, so a disk bomb fills it and not the host's
    /// disk (its pages count against `max_memory` too).
    pub dir_size: u64,
}

impl Default for Limits {
    /// 1,024 processes, 4 GiB, 1.5 cores, a 512 MiB `/tmp`, a 256 MiB `/dev/shm`, 1 GiB files,
    /// 2 GiB each for home, workspace and scratch.
    fn default() -> Limits {
        Limits {
            max_pids: 1024,
            max_memory: 4 << 30,
            cpu_cores: 1.5,
            tmp_size: 512 << 20,
            shm_size: 256 << 20,
            max_file_size: 1 << 30,
            dir_size: 2 << 30,
        }
    }
}

/// How the limits are enforced.
#[derive(Debug, Clone, PartialEq)]
pub enum Enforcement {
    /// A cgroup v2 directory of our own.
    CgroupV2(PathBuf),
    /// One directory per cgroup v1 hierarchy (pids, memory, cpu).
    CgroupV1(Vec<PathBuf>),
    /// Resource limits only (file size, core dumps, and the process count of the episode's
    /// own uid when it has one).
    Rlimits,
}

/// The limits in force for one jail.
#[derive(Debug)]
pub struct Applied {
    /// What was asked.
    pub limits: Limits,
    /// How it is enforced.
    pub enforcement: Enforcement,
    /// The `cgroup.procs` files the jail's first process writes itself into.
    pub(crate) procs_files: Vec<PathBuf>,
    /// Whether home, workspace and scratch are size-capped tmpfs mounts.
    pub dirs_capped: bool,
}

impl fmt::Display for Applied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = &self.limits;
        let mib = |b: u64| b >> 20;
        match &self.enforcement {
            Enforcement::CgroupV2(_) => write!(
                f,
                "cgroup v2: {} pids, {} MiB memory, {} cores",
                l.max_pids,
                mib(l.max_memory),
                l.cpu_cores
            )?,
            Enforcement::CgroupV1(_) => write!(
                f,
                "cgroup v1: {} pids, {} MiB memory, {} cores",
                l.max_pids,
                mib(l.max_memory),
                l.cpu_cores
            )?,
            Enforcement::Rlimits => write!(
                f,
                "rlimits only (no cgroup could be made: no delegated v2 subtree, not root for v1): {} processes per episode uid, no memory or CPU cap",
                l.max_pids
            )?,
        }
        write!(
            f,
            "; /tmp {} MiB, /dev/shm {} MiB, files {} MiB",
            mib(l.tmp_size),
            mib(l.shm_size),
            mib(l.max_file_size)
        )?;
        if self.dirs_capped {
            write!(
                f,
                "; home, workspace and scratch {} MiB each",
                mib(l.dir_size)
            )
        } else {
            f.write_str(
                "; home, workspace and scratch not capped (only root can mount them as tmpfs)",
            )
        }
    }
}

fn write(path: &Path, value: impl fmt::Display) -> io::Result<()> {
    fs::write(path, value.to_string())
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// Sets up the limits for the episode named `name` (a directory name).
pub fn apply(limits: Limits, name: &str) -> Applied {
    if let Some(dir) = try_v2(limits, name) {
        return Applied {
            limits,
            procs_files: vec![dir.join("cgroup.procs")],
            enforcement: Enforcement::CgroupV2(dir),
            dirs_capped: false,
        };
    }
    if let Some(dirs) = try_v1(limits, name) {
        return Applied {
            limits,
            procs_files: dirs.iter().map(|d| d.join("cgroup.procs")).collect(),
            enforcement: Enforcement::CgroupV1(dirs),
            dirs_capped: false,
        };
    }
    Applied {
        limits,
        enforcement: Enforcement::Rlimits,
        procs_files: Vec::new(),
        dirs_capped: false,
    }
}

/// A cgroup v2 subtree delegated to this process (its own cgroup's parent is writable and has
/// the controllers).
fn try_v2(limits: Limits, name: &str) -> Option<PathBuf> {
    let root = Path::new("/sys/fs/cgroup");
    if !root.join("cgroup.controllers").exists() {
        return None;
    }
    let own = fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let parent = root.join(path.trim_start_matches('/'));
    let parent = parent.parent()?.to_path_buf();
    let controllers = fs::read_to_string(parent.join("cgroup.subtree_control")).ok()?;
    if !["pids", "memory", "cpu"]
        .iter()
        .all(|c| controllers.split_whitespace().any(|x| x == *c))
    {
        return None;
    }
    let dir = parent.join(format!("hands-{name}"));
    fs::create_dir(&dir).ok()?;
    let result = (|| -> io::Result<()> {
        write(&dir.join("pids.max"), limits.max_pids)?;
        write(&dir.join("memory.max"), limits.max_memory)?;
        let period = 100_000u64;
        write(
            &dir.join("cpu.max"),
            format!("{} {period}", (limits.cpu_cores * period as f64) as u64),
        )
    })();
    match result {
        Ok(()) => Some(dir),
        Err(e) => {
            tracing::debug!("cgroup v2 limits not possible: {e}");
            let _ = fs::remove_dir(&dir);
            None
        }
    }
}

/// cgroup v1 hierarchies, as root.
fn try_v1(limits: Limits, name: &str) -> Option<Vec<PathBuf>> {
    // SAFETY: geteuid takes no arguments and cannot fail.
    #[allow(unsafe_code)]
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let root = Path::new("/sys/fs/cgroup");
    let mut made = Vec::new();
    let result = (|| -> io::Result<()> {
        for (controller, settings) in [
            ("pids", vec![("pids.max", limits.max_pids.to_string())]),
            (
                "memory",
                vec![("memory.limit_in_bytes", limits.max_memory.to_string())],
            ),
            (
                "cpu",
                vec![
                    ("cpu.cfs_period_us", "100000".to_owned()),
                    (
                        "cpu.cfs_quota_us",
                        ((limits.cpu_cores * 100_000.0) as u64).to_string(),
                    ),
                ],
            ),
        ] {
            let hierarchy = root.join(controller);
            if !hierarchy.join("cgroup.procs").exists() {
                return Err(io::Error::other(format!(
                    "no cgroup v1 {controller} hierarchy"
                )));
            }
            let dir = hierarchy.join("hands").join(name);
            fs::create_dir_all(&dir)?;
            made.push(dir.clone());
            for (file, value) in settings {
                write(&dir.join(file), value)?;
            }
        }
        Ok(())
    })();
    match result {
        Ok(()) => Some(made),
        Err(e) => {
            tracing::debug!("cgroup v1 limits not possible: {e}");
            for dir in made {
                let _ = fs::remove_dir(dir);
            }
            None
        }
    }
}

/// Kills every process left in the episode's cgroups and removes them.
pub fn remove(enforcement: &Enforcement) {
    let dirs: Vec<PathBuf> = match enforcement {
        Enforcement::CgroupV2(dir) => {
            let _ = fs::write(dir.join("cgroup.kill"), "1");
            vec![dir.clone()]
        }
        Enforcement::CgroupV1(dirs) => dirs.clone(),
        Enforcement::Rlimits => return,
    };
    remove_dirs(&dirs);
}

/// Kills what is in `dirs` (cgroup directories) and removes them, retrying while the kernel
/// finishes the processes.
pub(crate) fn remove_dirs(dirs: &[PathBuf]) {
    for _ in 0..100 {
        let mut left = false;
        for dir in dirs {
            if let Ok(procs) = fs::read_to_string(dir.join("cgroup.procs")) {
                for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                    // SAFETY: kill with plain integers.
                    #[allow(unsafe_code)]
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                    }
                    left = true;
                }
            }
            if dir.exists() && fs::remove_dir(dir).is_err() {
                left = true;
            }
        }
        if !left {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
