//! The text editor tool on real files in a temporary directory: every command, its answers and
//! refusals, root confinement with symlinks, and files that are not text.
#![allow(clippy::unwrap_used)] // Test helpers: a panic there is a failing test.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

use hands_sandbox::strings;
use hands_sandbox::{EditorConfig, EditorRoot, EditorTool, ToolOutcome};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A temporary directory (canonical, so answers name the paths the test expects) and an editor.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    editor: EditorTool,
}

impl Fixture {
    fn new() -> Self {
        Self::with(EditorConfig::default())
    }

    fn with(config: EditorConfig) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        Self {
            _dir: dir,
            root,
            editor: EditorTool::new(config).unwrap(),
        }
    }

    /// Confined to a `root` subdirectory of the temporary directory.
    fn confined() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        std::fs::create_dir(&root).unwrap();
        let editor = EditorTool::new(EditorConfig {
            roots: vec![EditorRoot::same(root.clone())],
            ..EditorConfig::default()
        })
        .unwrap();
        Self {
            _dir: dir,
            root,
            editor,
        }
    }

    fn path(&self, name: &str) -> String {
        self.root.join(name).display().to_string()
    }

    fn write(&self, name: &str, content: impl AsRef<[u8]>) -> String {
        let path = self.root.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, content).unwrap();
        path.display().to_string()
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.root.join(name)).unwrap()
    }

    async fn call(&mut self, input: Value) -> ToolOutcome {
        self.editor.call(&input, &CancellationToken::new()).await
    }

    async fn ok(&mut self, input: Value) -> String {
        let outcome = self.call(input.clone()).await;
        assert!(!outcome.is_error, "{input} failed: {}", outcome.text);
        outcome.text
    }

    async fn err(&mut self, input: Value) -> String {
        let outcome = self.call(input.clone()).await;
        assert!(outcome.is_error, "{input} succeeded: {}", outcome.text);
        outcome.text
    }
}

#[tokio::test]
async fn view_numbers_lines_like_cat_n() {
    let mut fx = Fixture::new();
    let path = fx.write("a.py", "def f():\n\treturn 1\n\nprint(f())\n");
    let text = fx.ok(json!({"command": "view", "path": path})).await;
    assert_eq!(
        text,
        format!(
            "Here's the result of running `cat -n` on {path}:\n     1\tdef f():\n     2\t\treturn 1\n     3\t\n     4\tprint(f())\n"
        )
    );
}

#[tokio::test]
async fn view_ranges() {
    let mut fx = Fixture::new();
    let path = fx.write(
        "ten.txt",
        (1..=10).map(|i| format!("l{i}\n")).collect::<String>(),
    );
    let view = |range: Value| json!({"command": "view", "path": path, "view_range": range});
    let body = |lines: &[(usize, &str)]| {
        let numbered: Vec<String> = lines.iter().map(|(n, l)| format!("{n:6}\t{l}")).collect();
        format!(
            "Here's the result of running `cat -n` on {path}:\n{}\n",
            numbered.join("\n")
        )
    };
    assert_eq!(
        fx.ok(view(json!([3, 4]))).await,
        body(&[(3, "l3"), (4, "l4")])
    );
    assert_eq!(
        fx.ok(view(json!([9, -1]))).await,
        body(&[(9, "l9"), (10, "l10")])
    );
    assert_eq!(fx.ok(view(json!([10, 10]))).await, body(&[(10, "l10")]));

    let refusals = [
        (
            json!([0, 3]),
            "Invalid `view_range`: [0, 3]. Its first element `0` should be within the range of lines of the file: [1, 10]",
        ),
        (
            json!([11, -1]),
            "Invalid `view_range`: [11, -1]. Its first element `11` should be within the range of lines of the file: [1, 10]",
        ),
        (
            json!([2, 12]),
            "Invalid `view_range`: [2, 12]. Its second element `12` should be smaller than the number of lines in the file: `10`",
        ),
        (
            json!([5, 3]),
            "Invalid `view_range`: [5, 3]. Its second element `3` should be larger or equal than its first `5`",
        ),
        (json!([5]), strings::VIEW_RANGE_NOT_TWO_INTEGERS),
    ];
    for (range, want) in refusals {
        assert_eq!(fx.err(view(range)).await, want);
    }
}

#[tokio::test]
async fn view_is_cut_at_max_characters() {
    let mut fx = Fixture::with(EditorConfig {
        max_characters: NonZeroUsize::new(10),
        ..EditorConfig::default()
    });
    let path = fx.write("long.txt", "0123456\nabcdefgh\nlast\n");
    let text = fx.ok(json!({"command": "view", "path": path})).await;
    assert_eq!(
        text,
        format!(
            "Here's the result of running `cat -n` on {path}:\n     1\t0123456\n     2\tab\n{}\n",
            strings::TRUNCATED_MESSAGE
        )
    );
    assert_eq!(
        fx.editor.declaration()["max_characters"],
        json!(10),
        "the declaration tells the model the same limit"
    );
}

#[tokio::test]
async fn view_of_a_directory_lists_two_levels_without_hidden_entries() {
    let mut fx = Fixture::new();
    fx.write("b.txt", "");
    fx.write(".hidden", "");
    fx.write("src/main.rs", "");
    fx.write("src/.cache/x", "");
    fx.write("src/deep/deeper/z.txt", "");
    fx.write(".git/config", "");
    let root = fx.root.display().to_string();
    let text = fx.ok(json!({"command": "view", "path": root})).await;
    assert_eq!(
        text,
        format!(
            "Here's the files and directories up to 2 levels deep in {root}, excluding hidden items:\n\
             {root}\n{root}/b.txt\n{root}/src\n{root}/src/deep\n{root}/src/main.rs\n"
        )
    );
    // A trailing slash names the same directory, shown as Python's `Path` shows it.
    let with_slash = fx
        .ok(json!({"command": "view", "path": format!("{root}/src/")}))
        .await;
    assert!(
        with_slash.starts_with(&format!(
            "Here's the files and directories up to 2 levels deep in {root}/src, excluding"
        )),
        "{with_slash}"
    );
    assert_eq!(
        fx.err(json!({"command": "view", "path": root, "view_range": [1, 2]}))
            .await,
        strings::VIEW_RANGE_ON_DIRECTORY
    );
}

#[tokio::test]
async fn create_writes_new_files_and_refuses_to_overwrite() {
    let mut fx = Fixture::new();
    let path = fx.path("new/dir/file.txt");
    let text = fx
        .ok(json!({"command": "create", "path": path, "file_text": "hello\n"}))
        .await;
    assert_eq!(text, format!("File created successfully at: {path}"));
    assert_eq!(fx.read("new/dir/file.txt"), "hello\n");

    let text = fx
        .err(json!({"command": "create", "path": path, "file_text": "again"}))
        .await;
    assert_eq!(
        text,
        format!("File already exists at: {path}. Cannot overwrite files using command `create`.")
    );
    assert_eq!(fx.read("new/dir/file.txt"), "hello\n", "left untouched");

    let dir = fx.path("new");
    let text = fx
        .err(json!({"command": "create", "path": dir, "file_text": "x"}))
        .await;
    assert_eq!(text, strings::file_exists(Path::new(&dir)));
}

#[tokio::test]
async fn create_without_parent_dirs_fails_like_the_reference() {
    let mut fx = Fixture::with(EditorConfig {
        create_parent_dirs: false,
        ..EditorConfig::default()
    });
    let path = fx.path("missing/file.txt");
    let text = fx
        .err(json!({"command": "create", "path": path, "file_text": "x"}))
        .await;
    assert!(
        text.starts_with("Ran into ")
            && text.ends_with(&format!(" while trying to write to {path}")),
        "{text}"
    );
}

#[tokio::test]
async fn str_replace_needs_exactly_one_occurrence() {
    let mut fx = Fixture::new();
    let path = fx.write("c.py", "x = 1\ny = 2\nx = 1\n\tz = 3\n");

    let text = fx
        .err(
            json!({"command": "str_replace", "path": path, "old_str": "w = 0", "new_str": "w = 1"}),
        )
        .await;
    assert_eq!(
        text,
        format!("No replacement was performed, old_str `w = 0` did not appear verbatim in {path}.")
    );

    let text = fx
        .err(
            json!({"command": "str_replace", "path": path, "old_str": "x = 1", "new_str": "x = 9"}),
        )
        .await;
    assert_eq!(
        text,
        "No replacement was performed. Multiple occurrences of old_str `x = 1` in lines [1, 3]. Please ensure it is unique"
    );
    assert_eq!(
        fx.read("c.py"),
        "x = 1\ny = 2\nx = 1\n\tz = 3\n",
        "no change"
    );

    let text = fx
        .ok(json!({"command": "str_replace", "path": path, "old_str": "y = 2\nx = 1", "new_str": "y = 20\nx = 10"}))
        .await;
    assert_eq!(
        text,
        format!(
            "The file {path} has been edited. Here's the result of running `cat -n` on a snippet of {path}:\n     1\tx = 1\n     2\ty = 20\n     3\tx = 10\n     4\t\tz = 3\nReview the changes and make sure they are as expected. Edit the file again if necessary."
        )
    );
    // Tabs stay tabs everywhere in the file.
    assert_eq!(fx.read("c.py"), "x = 1\ny = 20\nx = 10\n\tz = 3\n");

    // `new_str` absent deletes.
    fx.ok(json!({"command": "str_replace", "path": path, "old_str": "\tz = 3\n"}))
        .await;
    assert_eq!(fx.read("c.py"), "x = 1\ny = 20\nx = 10\n");

    assert_eq!(
        fx.err(json!({"command": "str_replace", "path": path, "old_str": ""}))
            .await,
        strings::EMPTY_OLD_STR
    );
}

#[tokio::test]
async fn insert_at_top_middle_end_and_out_of_range() {
    let mut fx = Fixture::new();
    let path = fx.write("i.txt", "a\nb\nc\n");
    let insert = |line: i64, text: &str| json!({"command": "insert", "path": path, "insert_line": line, "insert_text": text});

    let text = fx.ok(insert(0, "top")).await;
    assert_eq!(fx.read("i.txt"), "top\na\nb\nc\n");
    assert_eq!(
        text,
        format!(
            "The file {path} has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n     1\ttop\n     2\ta\n     3\tb\n     4\tc\nReview the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary."
        )
    );

    // As models send it: with a final newline. No stray empty line follows.
    fx.ok(insert(2, "mid\n")).await;
    assert_eq!(fx.read("i.txt"), "top\na\nmid\nb\nc\n");

    fx.ok(insert(5, "end")).await;
    assert_eq!(fx.read("i.txt"), "top\na\nmid\nb\nc\nend\n");

    // `new_str`, as the reference and older documentation name the text.
    fx.ok(json!({"command": "insert", "path": path, "insert_line": 1, "new_str": "alias"}))
        .await;
    assert_eq!(fx.read("i.txt"), "top\nalias\na\nmid\nb\nc\nend\n");

    for line in [8, -1] {
        assert_eq!(
            fx.err(insert(line, "x")).await,
            format!(
                "Invalid `insert_line` parameter: {line}. It should be within the range of lines of the file: [0, 7]"
            )
        );
    }
    assert_eq!(fx.read("i.txt"), "top\nalias\na\nmid\nb\nc\nend\n");
}

#[tokio::test]
async fn path_refusals() {
    let mut fx = Fixture::new();
    assert_eq!(
        fx.err(json!({"command": "view", "path": "notes/a.txt"}))
            .await,
        "The path notes/a.txt is not an absolute path, it should start with `/`. Maybe you meant /notes/a.txt?"
    );
    let missing = fx.path("nope.txt");
    assert_eq!(
        fx.err(json!({"command": "view", "path": missing})).await,
        format!("The path {missing} does not exist. Please provide a valid path.")
    );
    let dir = fx.root.display().to_string();
    assert_eq!(
        fx.err(json!({"command": "str_replace", "path": dir, "old_str": "a"}))
            .await,
        format!(
            "The path {dir} is a directory and only the `view` command can be used on directories"
        )
    );
    let text = fx.err(json!({"command": "undo_edit", "path": dir})).await;
    assert!(
        text.starts_with("Unrecognized command undo_edit."),
        "{text}"
    );
}

#[tokio::test]
async fn a_relative_path_is_suggested_under_the_root() {
    let mut fx = Fixture::confined();
    let want = format!(
        "The path a.txt is not an absolute path, it should start with `/`. Maybe you meant {}?",
        fx.root.join("a.txt").display()
    );
    assert_eq!(
        fx.err(json!({"command": "view", "path": "a.txt"})).await,
        want
    );
}

/// A confined fixture with `outside/secret.txt` beside its root, `root/link` a symlink to
/// `outside` and `root/alias.txt` a symlink to the secret.
fn with_links_out() -> (Fixture, PathBuf) {
    let fx = Fixture::confined();
    let outside = fx.root.parent().unwrap().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
    std::os::unix::fs::symlink(&outside, fx.root.join("link")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), fx.root.join("alias.txt")).unwrap();
    (fx, outside)
}

#[tokio::test]
async fn root_confinement_refuses_every_way_out() {
    let (mut fx, outside) = with_links_out();
    let root = fx.root.display().to_string();
    let refused = |path: &str| {
        format!(
            "The path {path} is outside the directory this editor may touch ({root}). Use a path under {root}."
        )
    };

    // Inside: fine.
    let inside = fx.path("ok.txt");
    fx.ok(json!({"command": "create", "path": inside, "file_text": "fine\n"}))
        .await;

    // Plainly outside, and with `..`.
    let secret = outside.join("secret.txt").display().to_string();
    let dotdot = format!("{root}/../outside/secret.txt");
    for path in [&secret, &dotdot] {
        let shown = Path::new(path).components().collect::<PathBuf>();
        assert_eq!(
            fx.err(json!({"command": "view", "path": path})).await,
            refused(&shown.display().to_string()),
            "view {path}"
        );
        assert_eq!(
            fx.err(json!({"command": "str_replace", "path": path, "old_str": "secret", "new_str": "leaked"}))
                .await,
            refused(&shown.display().to_string()),
            "str_replace {path}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "secret\n"
    );

    // Climbing out of a directory that does not exist yet is refused too; nothing appears.
    let climb = format!("{root}/fresh/../../outside/new2.txt");
    let shown = Path::new(&climb).components().collect::<PathBuf>();
    assert_eq!(
        fx.err(json!({"command": "create", "path": climb, "file_text": "x"}))
            .await,
        refused(&shown.display().to_string()),
    );
    assert!(!outside.join("new2.txt").exists());
    assert!(!fx.root.join("fresh").exists());

    // The listing of the root shows the symlink but does not enter it.
    let listing = fx.ok(json!({"command": "view", "path": root})).await;
    assert!(listing.contains(&format!("{root}/link\n")), "{listing}");
    assert!(!listing.contains("secret.txt"), "{listing}");
}

#[tokio::test]
async fn a_path_through_a_symlink_is_refused_naming_it() {
    let (mut fx, outside) = with_links_out();
    let link = fx.path("link");
    let through = |path: &str| {
        format!(
            "The path {path} goes through the symbolic link {link}, which this editor does not follow. Name the file by a path without symbolic links."
        )
    };
    let is_link = |path: &str| {
        format!(
            "The path {path} is a symbolic link, which this editor does not follow. Name the file by a path without symbolic links."
        )
    };
    let via_dir = fx.path("link/secret.txt");
    let via_file = fx.path("alias.txt");
    for input in [
        json!({"command": "view", "path": via_dir}),
        json!({"command": "str_replace", "path": via_dir, "old_str": "secret", "new_str": "leaked"}),
        json!({"command": "insert", "path": via_dir, "insert_line": 0, "insert_text": "leaked"}),
        json!({"command": "create", "path": fx.path("link/new.txt"), "file_text": "x"}),
        json!({"command": "create", "path": fx.path("link/deeper/new.txt"), "file_text": "x"}),
    ] {
        let path = input["path"].as_str().unwrap().to_owned();
        assert_eq!(fx.err(input.clone()).await, through(&path), "{input}");
    }
    for input in [
        json!({"command": "view", "path": via_file}),
        json!({"command": "str_replace", "path": via_file, "old_str": "secret", "new_str": "leaked"}),
        json!({"command": "create", "path": via_file, "file_text": "x"}),
        json!({"command": "view", "path": link}),
    ] {
        let path = input["path"].as_str().unwrap().to_owned();
        assert_eq!(fx.err(input.clone()).await, is_link(&path), "{input}");
    }
    // A dangling link under a root is refused the same way, never written through.
    let target = fx.root.join("target.txt");
    std::os::unix::fs::symlink(&target, fx.root.join("dangling")).unwrap();
    let dangling = fx.path("dangling");
    assert_eq!(
        fx.err(json!({"command": "create", "path": dangling, "file_text": "x"}))
            .await,
        is_link(&dangling)
    );
    assert!(!target.exists());
    let entries: Vec<_> = std::fs::read_dir(&outside).unwrap().collect();
    assert_eq!(entries.len(), 1, "only the secret is outside: {entries:?}");
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "secret\n"
    );
}

#[tokio::test]
async fn paths_outside_every_root_are_refused() {
    // The model's paths (`/home/user`, `/workspace`) exist only as the editor maps them.
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    std::fs::create_dir(base.join("home")).unwrap();
    std::fs::create_dir(base.join("workspace")).unwrap();
    let mut editor = EditorTool::new(EditorConfig {
        roots: vec![
            EditorRoot {
                inside: "/home/user".into(),
                host: base.join("home"),
            },
            EditorRoot {
                inside: "/workspace".into(),
                host: base.join("workspace"),
            },
        ],
        ..EditorConfig::default()
    })
    .unwrap();
    let cancel = CancellationToken::new();
    let mut call = async |input: Value| editor.call(&input, &cancel).await;

    let created =
        call(json!({"command": "create", "path": "/workspace/src/a.txt", "file_text": "hi\n"}))
            .await;
    assert!(!created.is_error, "{}", created.text);
    assert_eq!(
        created.text,
        "File created successfully at: /workspace/src/a.txt"
    );
    assert_eq!(
        std::fs::read_to_string(base.join("workspace/src/a.txt")).unwrap(),
        "hi\n"
    );
    let listing = call(json!({"command": "view", "path": "/workspace"})).await;
    assert_eq!(
        listing.text,
        "Here's the files and directories up to 2 levels deep in /workspace, excluding hidden items:\n/workspace\n/workspace/src\n/workspace/src/a.txt\n"
    );
    let viewed = call(json!({"command": "view", "path": "/home/user"})).await;
    assert!(!viewed.is_error, "{}", viewed.text);

    for path in [
        "/etc/passwd",
        "/home/other/x.txt",
        "/workspacex/a.txt",
        "/workspace/../home/user/x.txt",
        "/home/user/../../etc/passwd",
        base.join("workspace/src/a.txt").to_str().unwrap(),
    ] {
        for input in [
            json!({"command": "view", "path": path}),
            json!({"command": "create", "path": path, "file_text": "x"}),
        ] {
            let outcome = call(input.clone()).await;
            assert!(outcome.is_error, "{input}");
            assert_eq!(
                outcome.text,
                format!(
                    "The path {path} is outside the directories this editor may touch: /home/user, /workspace. Use a path under one of them."
                ),
                "{input}"
            );
        }
    }
    let relative = call(json!({"command": "view", "path": "notes.txt"})).await;
    assert!(
        relative
            .text
            .ends_with("Maybe you meant /home/user/notes.txt?"),
        "{}",
        relative.text
    );
    assert!(!base.join("home/x.txt").exists());
    assert!(!Path::new("/workspacex").exists());
}

#[test]
fn a_symlink_swapped_in_during_a_write_never_lands_outside_the_root() {
    let fx = Fixture::confined();
    let outside = fx.root.parent().unwrap().join("outside");
    std::fs::create_dir(&outside).unwrap();
    // `root/sub` and `root/other` trade places atomically, again and again: one is a real
    // directory, the other a symlink to `outside`.
    std::fs::create_dir(fx.root.join("sub")).unwrap();
    std::os::unix::fs::symlink(&outside, fx.root.join("other")).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let n_swaps = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let swapper = {
        let (stop, n_swaps, root) = (stop.clone(), n_swaps.clone(), fx.root.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    root.join("sub"),
                    rustix::fs::CWD,
                    root.join("other"),
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .unwrap();
                n_swaps.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        })
    };
    while n_swaps.load(std::sync::atomic::Ordering::Relaxed) == 0 {
        std::thread::yield_now();
    }
    let mut n_met_a_link = 0;
    for i in 0..200 {
        let path = fx.path(&format!("sub/f{i}.txt"));
        let create = json!({"command": "create", "path": path, "file_text": "x\n"});
        let command = hands_sandbox::EditorCommand::parse(&create).unwrap();
        match fx.editor.execute_blocking(command) {
            Ok(_) => {}
            Err(err) if err.to_string().contains("symbolic link") => n_met_a_link += 1,
            // Other refusals (a directory missing for a moment) are fine: nothing was written.
            Err(_) => {}
        }
        let landed: Vec<_> = std::fs::read_dir(&outside).unwrap().collect();
        assert!(landed.is_empty(), "write {i} landed outside: {landed:?}");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(n_met_a_link > 0, "the writes met the swapped-in symlink");
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none());
}

#[test]
fn a_write_is_atomic() {
    use std::os::unix::fs::MetadataExt as _;
    let fx = Fixture::confined();
    // Each version is one letter repeated, so a reader can tell a whole one from a part.
    const N_BYTES: usize = 4 << 20;
    let path = fx.write("big.txt", "a".repeat(N_BYTES));
    let real = fx.root.join("big.txt");
    // Held open so its inode cannot be freed and its number handed to a later version.
    let original = std::fs::File::open(&real).unwrap();
    let inode_before = original.metadata().unwrap().ino();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (stop, real) = (stop.clone(), real.clone());
        std::thread::spawn(move || {
            let mut n_reads = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let bytes = std::fs::read(&real).unwrap();
                let whole = bytes.len() == N_BYTES && bytes.iter().all(|b| *b == bytes[0]);
                assert!(
                    whole,
                    "a reader saw a partial file of {} bytes",
                    bytes.len()
                );
                n_reads += 1;
            }
            n_reads
        })
    };
    let letters = ["b", "c", "d", "e", "f", "g", "h", "i"];
    let mut previous = "a".to_owned();
    for letter in letters {
        // The whole run of one letter becomes a run of the next: the file is rewritten whole.
        let command = hands_sandbox::EditorCommand::parse(&json!({
            "command": "str_replace", "path": path,
            "old_str": previous.repeat(N_BYTES), "new_str": letter.repeat(N_BYTES)
        }))
        .unwrap();
        fx.editor.execute_blocking(command).unwrap();
        previous = letter.to_owned();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let n_reads = reader.join().unwrap();
    assert!(n_reads > 0);
    let after = std::fs::metadata(&real).unwrap();
    assert_ne!(
        after.ino(),
        inode_before,
        "the file was renamed over, not rewritten"
    );
    assert_eq!(
        std::fs::read(&real).unwrap(),
        "i".repeat(N_BYTES).as_bytes()
    );
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(&fx.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["big.txt"]);
}

#[tokio::test]
async fn a_dangling_symlink_is_never_written_through() {
    let mut fx = Fixture::new();
    let target = fx.root.join("target.txt");
    std::os::unix::fs::symlink(&target, fx.root.join("dangling")).unwrap();
    let path = fx.path("dangling");
    assert_eq!(
        fx.err(json!({"command": "create", "path": path, "file_text": "x"}))
            .await,
        strings::file_exists(Path::new(&path))
    );
    assert!(!target.exists());
}

#[tokio::test]
async fn files_that_are_not_utf8_text_are_refused_clearly() {
    let mut fx = Fixture::with(EditorConfig {
        max_file_bytes: 64,
        ..EditorConfig::default()
    });
    let binary = fx.write("image.bin", b"PNG\xff\x00\x01");
    let want = format!(
        "The file {binary} is not UTF-8 text (invalid byte at offset 3); this editor only views and edits UTF-8 text files. Use the bash tool to inspect binary files."
    );
    assert_eq!(
        fx.err(json!({"command": "view", "path": binary})).await,
        want
    );
    assert_eq!(
        fx.err(json!({"command": "str_replace", "path": binary, "old_str": "PNG"}))
            .await,
        want
    );
    assert_eq!(std::fs::read(&binary).unwrap(), b"PNG\xff\x00\x01");

    let big = fx.write("big.txt", "x".repeat(65));
    assert_eq!(
        fx.err(json!({"command": "view", "path": big})).await,
        format!(
            "The file {big} is 65 bytes, more than this editor reads (64 bytes). Use the bash tool (grep -n, sed -n) to work on it."
        )
    );
}

#[tokio::test]
async fn a_cancelled_call_changes_nothing() {
    let fx = Fixture::new();
    let path = fx.write("keep.txt", "a\n");
    let cancel = CancellationToken::new();
    cancel.cancel();
    let mut editor = fx.editor.clone();
    let outcome = editor
        .call(
            &json!({"command": "str_replace", "path": path, "old_str": "a", "new_str": "b"}),
            &cancel,
        )
        .await;
    assert!(outcome.is_error);
    assert_eq!(outcome.text, "cancelled: the editor command was not run");
    assert_eq!(fx.read("keep.txt"), "a\n");
}
