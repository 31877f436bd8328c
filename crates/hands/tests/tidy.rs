//! The house rules, checked (issue 18, as rust-analyzer's `tidy`).
//!
//! Each rule is a pure function over data read from the repository — the tracked paths with
//! their sizes and first bytes, the source texts, ARCHITECTURE.md, the crates' Cargo.toml — and
//! returns one line per violation, saying what is wrong and what to do. The unit tests feed each
//! rule synthetic input; `the_repository_keeps_the_house_rules` runs every rule on the real
//! repository (the files `git ls-files` lists, as they are in the work tree).
//!
//! The rules:
//! - (a) no tracked binary or generated file: no build output by extension (`.so .whl .pyc .o .a
//!   .rlib .dylib .dll .exe`), no file over 1 MB, and no file with a NUL byte in its first 8 KB —
//!   except an image or font fixture (`.png .jpg .jpeg .gif .webp .ico .ttf .otf .woff .woff2`)
//!   under a `tests`, `fixtures` or `testdata` directory, which may be binary but not over 1 MB;
//! - (b) no tracked source file (`.rs .py .js .mjs .ts .sh`) over 1,500 lines;
//! - (c) every crate directory under `crates/` has a `### \`name\`` heading in ARCHITECTURE.md,
//!   and every `### \`hands…\`` heading names a crate directory;
//! - (d) the "Dependency directions" block of ARCHITECTURE.md is true: each `A ──> B, C` is a
//!   `[dependencies]` entry of A's Cargo.toml (`A ──(dev)──> B` a `[dev-dependencies]` one, `A ──>
//!   (no hands crate)` no `hands…` entry), every crate has a line, and every `hands…` entry of a
//!   crate's `[dependencies]` is stated;
//! - (e) every spec citation in a source comment (the word `Spec` and a colon) names, first, the
//!   stem of a file in `docs/spec/` (`claude-computer-use-tool` for
//!   `docs/spec/claude-computer-use-tool.es.md`);
//! - (f) no function over 150 lines (from its `fn` keyword to its closing brace, measured on the
//!   `syn` parse) in a tracked `.rs` file of `crates/`, methods of impl and trait blocks included,
//!   test code left out (`tests/` and `benches/` directories, `tests.rs` files, `#[cfg(test)]`
//!   items, `#[test]` functions).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One tracked file as rule (a) sees it.
#[derive(Debug, Clone)]
struct Tracked {
    /// The path from the repository root, with `/`.
    path: String,
    /// Its size in bytes.
    size: u64,
    /// Its first bytes (at most [`HEAD_BYTES`]).
    head: Vec<u8>,
}

/// How much of each file is searched for a NUL byte.
const HEAD_BYTES: usize = 8 * 1024;
/// The largest file that may be tracked.
const MAX_BYTES: u64 = 1_000_000;
/// The longest source file.
const MAX_LINES: usize = 1_500;
/// Extensions of build outputs, never tracked.
const GENERATED: &[&str] = &["so", "whl", "pyc", "o", "a", "rlib", "dylib", "dll", "exe"];
/// Binary fixtures allowed under a test directory.
const FIXTURE_TYPES: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "webp", "ico", "ttf", "otf", "woff", "woff2",
];
/// Directories a binary fixture may live under.
const FIXTURE_DIRS: &[&str] = &["tests", "fixtures", "testdata"];
/// Source files whose length is capped.
const SOURCES: &[&str] = &["rs", "py", "js", "mjs", "ts", "sh"];
/// The citation marker, spelled so this file does not cite anything itself.
const MARK: &str = concat!("Sp", "ec:");

fn extension(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next()?;
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty()).then_some(ext)
}

/// (a) No tracked binary or generated file.
fn binary_or_generated(files: &[Tracked]) -> Vec<String> {
    let mut out = Vec::new();
    for file in files {
        let ext = extension(&file.path).unwrap_or("");
        if GENERATED.contains(&ext) {
            out.push(format!(
                "{}: a build output (`.{ext}`) is tracked; `git rm --cached` it and let \
                 .gitignore cover it",
                file.path
            ));
            continue;
        }
        if file.size > MAX_BYTES {
            out.push(format!(
                "{}: {} bytes tracked (the limit is {MAX_BYTES}); keep large or generated data \
                 out of git",
                file.path, file.size
            ));
            continue;
        }
        let fixture = FIXTURE_TYPES.contains(&ext)
            && file
                .path
                .split('/')
                .rev()
                .skip(1)
                .any(|dir| FIXTURE_DIRS.contains(&dir));
        if !fixture && file.head.contains(&0) {
            out.push(format!(
                "{}: a binary file (a NUL byte in its first 8 KB) is tracked; only image and \
                 font fixtures under tests/ or fixtures/ may be binary",
                file.path
            ));
        }
    }
    out
}

/// (b) No tracked source file over [`MAX_LINES`] lines.
fn long_sources(sources: &[(String, String)]) -> Vec<String> {
    sources
        .iter()
        .filter(|(path, _)| extension(path).is_some_and(|ext| SOURCES.contains(&ext)))
        .filter_map(|(path, text)| {
            let lines = text.lines().count();
            (lines > MAX_LINES).then(|| {
                format!(
                    "{path}: {lines} lines (the limit is {MAX_LINES}); split it by subject into \
                     a module directory"
                )
            })
        })
        .collect()
}

/// The crate names of ARCHITECTURE.md's `### \`name\`` headings.
fn crate_headings(architecture: &str) -> Vec<String> {
    architecture
        .lines()
        .filter_map(|line| line.strip_prefix("### `"))
        .filter_map(|rest| rest.split_once('`').map(|(name, _)| name.to_owned()))
        .filter(|name| name.starts_with("hands"))
        .collect()
}

/// (c) The crates ARCHITECTURE.md describes are the crates under `crates/`.
fn crates_named(crate_dirs: &BTreeSet<String>, architecture: &str) -> Vec<String> {
    let headings: BTreeSet<String> = crate_headings(architecture).into_iter().collect();
    let mut out = Vec::new();
    for dir in crate_dirs.difference(&headings) {
        out.push(format!(
            "crates/{dir}: no `### `{dir}`` heading in ARCHITECTURE.md; say what it owns there"
        ));
    }
    for name in headings.difference(crate_dirs) {
        out.push(format!(
            "ARCHITECTURE.md: the heading `### `{name}`` names no crate under crates/; remove it \
             or fix the name"
        ));
    }
    out
}

/// Which table of a Cargo.toml an arrow speaks of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `[dependencies]`, `──>`.
    Normal,
    /// `[dev-dependencies]`, `──(dev)──>`.
    Dev,
}

/// One line of the "Dependency directions" block: `from ──> to` (`to` empty for `(no hands
/// crate)`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Arrow {
    from: Vec<String>,
    kind: Kind,
    to: Vec<String>,
    line: usize,
}

/// The first word of each comma-separated item, remarks in parentheses left out (`hands (bin)` is
/// `hands`; `hands-mcp (+ rmcp, axum)` is `hands-mcp`).
fn names(list: &str) -> Vec<String> {
    let mut depth = 0usize;
    let bare: String = list
        .chars()
        .filter(|c| {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect();
    bare.split(',')
        .filter_map(|item| item.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// The arrows of the fenced block under `## Dependency directions`, or why there are none.
fn arrows(architecture: &str) -> Result<Vec<Arrow>, String> {
    let mut lines = architecture.lines().enumerate();
    lines
        .by_ref()
        .find(|(_, l)| l.trim() == "## Dependency directions")
        .ok_or("ARCHITECTURE.md: no `## Dependency directions` section")?;
    lines
        .by_ref()
        .find(|(_, l)| l.starts_with("```"))
        .ok_or("ARCHITECTURE.md: no fenced block under `## Dependency directions`")?;
    let mut out = Vec::new();
    for (idx, line) in lines {
        if line.starts_with("```") {
            return Ok(out);
        }
        if line.trim().is_empty() {
            continue;
        }
        let (from, kind, to) = if let Some((from, to)) = line.split_once("──(dev)──>") {
            (from, Kind::Dev, to)
        } else if let Some((from, to)) = line.split_once("──>") {
            (from, Kind::Normal, to)
        } else {
            return Err(format!(
                "ARCHITECTURE.md:{}: `{line}` is not `A ──> B, C`",
                idx + 1
            ));
        };
        let to = if to.trim() == "(no hands crate)" {
            Vec::new()
        } else {
            names(to)
        };
        out.push(Arrow {
            from: names(from),
            kind,
            to,
            line: idx + 1,
        });
    }
    Err("ARCHITECTURE.md: the `## Dependency directions` block is not closed".to_owned())
}

/// The `hands…` entries of one table of a Cargo.toml, or why it cannot be read.
fn hands_dependencies(cargo_toml: &str, kind: Kind) -> Result<BTreeSet<String>, String> {
    let table: toml::Table = cargo_toml.parse().map_err(|e| format!("not TOML: {e}"))?;
    let key = match kind {
        Kind::Normal => "dependencies",
        Kind::Dev => "dev-dependencies",
    };
    Ok(table
        .get(key)
        .and_then(toml::Value::as_table)
        .map(|deps| {
            deps.keys()
                .filter(|name| name.starts_with("hands"))
                .cloned()
                .collect()
        })
        .unwrap_or_default())
}

/// (d) The dependency block matches the Cargo.toml files (`manifests`: crate name → text).
fn dependency_arrows(architecture: &str, manifests: &BTreeMap<String, String>) -> Vec<String> {
    let arrows = match arrows(architecture) {
        Ok(arrows) => arrows,
        Err(why) => return vec![why],
    };
    let mut out = Vec::new();
    let mut stated: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for arrow in &arrows {
        for from in &arrow.from {
            let Some(manifest) = manifests.get(from) else {
                out.push(format!(
                    "ARCHITECTURE.md:{}: `{from}` is not a crate under crates/",
                    arrow.line
                ));
                continue;
            };
            if arrow.kind == Kind::Normal {
                stated
                    .entry(from)
                    .or_default()
                    .extend(arrow.to.iter().map(String::as_str));
            }
            let deps = match hands_dependencies(manifest, arrow.kind) {
                Ok(deps) => deps,
                Err(why) => {
                    out.push(format!("crates/{from}/Cargo.toml: {why}"));
                    continue;
                }
            };
            let table = match arrow.kind {
                Kind::Normal => "[dependencies]",
                Kind::Dev => "[dev-dependencies]",
            };
            for to in &arrow.to {
                if !deps.contains(to) {
                    out.push(format!(
                        "ARCHITECTURE.md:{}: states `{from} ──> {to}`, but crates/{from}/\
                         Cargo.toml has no `{to}` in {table}; fix the arrow or the manifest",
                        arrow.line
                    ));
                }
            }
            if arrow.to.is_empty() {
                for dep in &deps {
                    out.push(format!(
                        "ARCHITECTURE.md:{}: states `{from}` depends on no hands crate, but \
                         crates/{from}/Cargo.toml has `{dep}` in {table}",
                        arrow.line
                    ));
                }
            }
        }
    }
    for (name, manifest) in manifests {
        let Some(said) = stated.get(name.as_str()) else {
            out.push(format!(
                "ARCHITECTURE.md: no `{name} ──> …` line under `## Dependency directions`; add \
                 one (`(no hands crate)` when it has none)"
            ));
            continue;
        };
        let Ok(deps) = hands_dependencies(manifest, Kind::Normal) else {
            continue;
        };
        for dep in deps.iter().filter(|dep| !said.contains(dep.as_str())) {
            out.push(format!(
                "crates/{name}/Cargo.toml: depends on `{dep}`, which ARCHITECTURE.md's \
                 dependency block does not state; add `{name} ──> {dep}`"
            ));
        }
    }
    out
}

/// The stem of a spec file's name: `api-contracts` for `api-contracts.md`.
fn spec_stem(path: &str) -> Option<&str> {
    let name = path.strip_prefix("docs/spec/")?;
    (!name.contains('/')).then(|| name.split('.').next().unwrap_or(name))
}

/// (e) Every spec citation in a source comment names a spec file's stem first.
fn spec_citations(sources: &[(String, String)], stems: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    for (path, text) in sources {
        let comment = match extension(path) {
            Some("rs" | "js" | "mjs" | "ts") => "//",
            Some("py" | "sh") => "#",
            _ => continue,
        };
        for (idx, line) in text.lines().enumerate() {
            let Some(start) = line.find(comment) else {
                continue;
            };
            let in_comment = &line[start..];
            for (at, _) in in_comment.match_indices(MARK) {
                let before = in_comment[..at].chars().next_back();
                let after = &in_comment[at + MARK.len()..];
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') || after.starts_with(':')
                {
                    continue;
                }
                let name = after
                    .trim_start()
                    .split([' ', ',', ';', ':', '(', ')'])
                    .next()
                    .unwrap_or("")
                    .trim_end_matches('.');
                if !stems.contains(name) {
                    out.push(format!(
                        "{path}:{}: the spec citation names `{name}`, not a file in docs/spec/; \
                         start it with one of {stems:?}",
                        idx + 1
                    ));
                }
            }
        }
    }
    out
}

/// The longest function outside tests: lines from its `fn` keyword to its closing brace.
const MAX_FN_LINES: usize = 150;

/// Whether a tracked path is test or bench code, which rule (f) does not measure: anything
/// under a `tests` or `benches` directory, and `tests.rs` modules.
fn is_test_code(path: &str) -> bool {
    let mut parts = path.split('/');
    let file = parts.next_back().unwrap_or("");
    file == "tests.rs" || parts.any(|dir| dir == "tests" || dir == "benches")
}

/// Whether `cfg(…)` holds only when testing: `cfg(test)`, or `cfg(all(…))` with `test` among
/// its conditions.
fn cfg_is_test(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<bool> {
    if meta.path.is_ident("test") {
        return Ok(true);
    }
    let mut test = false;
    if meta.path.is_ident("all") {
        meta.parse_nested_meta(|inner| {
            test |= cfg_is_test(&inner)?;
            Ok(())
        })?;
    } else if meta.input.peek(syn::token::Paren) {
        // `not(test)`, `any(test, …)`: compiled outside tests too; their contents are skipped.
        meta.parse_nested_meta(|_| Ok(()))?;
    } else if meta.input.peek(syn::Token![=]) {
        // `feature = "…"`: the value is skipped.
        meta.value()?.parse::<syn::Lit>()?;
    }
    Ok(test)
}

/// Whether an item's attributes make it test code: `#[test]` (any `…::test`, such as
/// `#[tokio::test]`) or a `cfg` that holds only when testing.
fn is_test_item(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        let path = attr.path();
        if path.segments.last().is_some_and(|s| s.ident == "test") {
            return true;
        }
        let mut test = false;
        if path.is_ident("cfg") {
            // An unreadable `cfg` counts as not a test: the function is measured.
            let _ = attr.parse_nested_meta(|meta| {
                test |= cfg_is_test(&meta)?;
                Ok(())
            });
        }
        test
    })
}

/// The functions of one file, with the line of their `fn` keyword and their length in lines;
/// test code skipped. Methods of impl blocks and default methods of traits are functions too.
#[derive(Default)]
struct Functions {
    found: Vec<(usize, usize, String)>,
}

impl Functions {
    fn note(&mut self, name: &syn::Ident, fn_token: &syn::token::Fn, block: &syn::Block) {
        let first = fn_token.span.start().line;
        let last = block.brace_token.span.close().end().line;
        self.found.push((first, last + 1 - first, name.to_string()));
    }
}

impl<'ast> syn::visit::Visit<'ast> for Functions {
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if !is_test_item(&item.attrs) {
            syn::visit::visit_item_mod(self, item);
        }
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        if !is_test_item(&item.attrs) {
            syn::visit::visit_item_impl(self, item);
        }
    }

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        if !is_test_item(&item.attrs) {
            self.note(&item.sig.ident, &item.sig.fn_token, &item.block);
            syn::visit::visit_item_fn(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if !is_test_item(&item.attrs) {
            self.note(&item.sig.ident, &item.sig.fn_token, &item.block);
            syn::visit::visit_impl_item_fn(self, item);
        }
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        if is_test_item(&item.attrs) {
            return;
        }
        if let Some(block) = &item.default {
            self.note(&item.sig.ident, &item.sig.fn_token, block);
        }
        syn::visit::visit_trait_item_fn(self, item);
    }
}

/// (f) No function over [`MAX_FN_LINES`] lines in a tracked `.rs` file of `crates/`, outside
/// test code (`tests/` and `benches/` directories, `tests.rs` files, `#[cfg(test)]` items,
/// `#[test]` functions). Lengths come from the parsed
/// source (`syn` spans), so braces in strings and comments do not count.
fn long_functions(sources: &[(String, String)]) -> Vec<String> {
    use syn::visit::Visit as _;
    let mut out = Vec::new();
    for (path, text) in sources {
        if !path.starts_with("crates/") || !path.ends_with(".rs") || is_test_code(path) {
            continue;
        }
        let file = match syn::parse_file(text) {
            Ok(file) => file,
            Err(e) => {
                let at = e.span().start();
                out.push(format!(
                    "{path}:{}:{}: does not parse as Rust ({e}), so its functions cannot be \
                     measured",
                    at.line,
                    at.column + 1
                ));
                continue;
            }
        };
        if is_test_item(&file.attrs) {
            continue;
        }
        let mut functions = Functions::default();
        functions.visit_file(&file);
        for (line, n_lines, name) in functions.found {
            if n_lines > MAX_FN_LINES {
                out.push(format!(
                    "{path}:{line}: fn `{name}` is {n_lines} lines (the limit is {MAX_FN_LINES}); \
                     split it into named helpers, one per concern"
                ));
            }
        }
    }
    out
}

/// The repository this crate lives in.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The tracked paths, from `git ls-files`.
fn tracked_paths(root: &Path) -> Vec<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["ls-files", "-z"])
        .output()
        .expect("git ls-files runs");
    assert!(output.status.success(), "git ls-files failed: {output:?}");
    output
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}

#[test]
fn the_repository_keeps_the_house_rules() {
    let root = repo_root();
    let mut tracked = Vec::new();
    let mut sources = Vec::new();
    for path in tracked_paths(&root) {
        let full = root.join(&path);
        // A symlink or a file deleted in the work tree has no content of its own here.
        let Ok(meta) = std::fs::symlink_metadata(&full) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let mut head = Vec::with_capacity(HEAD_BYTES);
        std::fs::File::open(&full)
            .expect("a tracked file opens")
            .take(HEAD_BYTES as u64)
            .read_to_end(&mut head)
            .expect("a tracked file reads");
        if extension(&path).is_some_and(|ext| SOURCES.contains(&ext)) {
            let text = std::fs::read(&full).expect("a tracked source reads");
            sources.push((path.clone(), String::from_utf8_lossy(&text).into_owned()));
        }
        tracked.push(Tracked {
            path,
            size: meta.len(),
            head,
        });
    }
    let architecture =
        std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md reads");
    let crate_dirs: BTreeSet<String> = tracked
        .iter()
        .filter_map(|f| f.path.strip_prefix("crates/")?.strip_suffix("/Cargo.toml"))
        .filter(|dir| !dir.contains('/'))
        .map(str::to_owned)
        .collect();
    let manifests: BTreeMap<String, String> = crate_dirs
        .iter()
        .map(|dir| {
            let text = std::fs::read_to_string(root.join("crates").join(dir).join("Cargo.toml"))
                .expect("a crate's Cargo.toml reads");
            (dir.clone(), text)
        })
        .collect();
    let stems: BTreeSet<String> = tracked
        .iter()
        .filter_map(|f| spec_stem(&f.path))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        stems.len(),
        3,
        "docs/spec/ holds the project's three spec documents: {stems:?}"
    );
    assert!(crate_dirs.len() > 10, "found the crates: {crate_dirs:?}");

    let mut violations = binary_or_generated(&tracked);
    violations.extend(long_sources(&sources));
    violations.extend(crates_named(&crate_dirs, &architecture));
    violations.extend(dependency_arrows(&architecture, &manifests));
    violations.extend(spec_citations(&sources, &stems));
    violations.extend(long_functions(&sources));
    assert!(
        violations.is_empty(),
        "the house rules are broken:\n{}",
        violations.join("\n")
    );
}

#[cfg(test)]
mod rules {
    use super::*;

    fn file(path: &str, size: u64, head: &[u8]) -> Tracked {
        Tracked {
            path: path.to_owned(),
            size,
            head: head.to_vec(),
        }
    }

    #[test]
    fn a_tracked_shared_object_is_refused() {
        let files = [
            file("crates/x/src/lib.rs", 100, b"fn main() {}"),
            file("crates/x/y.so", 1_000, b"\x7fELF"),
        ];
        assert_eq!(
            binary_or_generated(&files),
            [
                "crates/x/y.so: a build output (`.so`) is tracked; `git rm --cached` it and let \
              .gitignore cover it"
            ]
        );
    }

    #[test]
    fn every_generated_extension_is_refused_even_when_small_and_textual() {
        for ext in GENERATED {
            let path = format!("a/b.{ext}");
            let found = binary_or_generated(&[file(&path, 1, b"x")]);
            assert_eq!(found.len(), 1, "{path}: {found:?}");
            assert!(found[0].starts_with(&format!("{path}: a build output")));
        }
        // A name that only ends in the letters is not an extension.
        assert!(
            binary_or_generated(&[file("docs/so", 1, b"x"), file("a/.so", 1, b"x")]).is_empty()
        );
    }

    #[test]
    fn a_file_over_one_megabyte_is_refused_even_as_a_fixture() {
        let found = binary_or_generated(&[
            file("data/big.json", MAX_BYTES + 1, b"{}"),
            file("crates/x/tests/big.png", MAX_BYTES + 1, b"\x89PNG\0"),
            file("data/limit.json", MAX_BYTES, b"{}"),
        ]);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("data/big.json: 1000001 bytes tracked"));
        assert!(found[1].starts_with("crates/x/tests/big.png: 1000001 bytes tracked"));
    }

    #[test]
    fn a_nul_byte_is_refused_unless_an_image_or_font_fixture_under_a_test_dir() {
        let found = binary_or_generated(&[
            file("crates/x/src/blob.bin", 10, b"ab\0cd"),
            file("crates/x/src/logo.png", 10, b"\x89PNG\0"),
            file("crates/x/tests/shot.png", 10, b"\x89PNG\0"),
            file("crates/x/tests/fixtures/f.woff2", 10, b"wOF2\0"),
            file("crates/x/tests/data.bin", 10, b"\0"),
            file("crates/x/src/text.rs", 10, b"fn f() {}"),
        ]);
        assert_eq!(
            found,
            [
                "crates/x/src/blob.bin: a binary file (a NUL byte in its first 8 KB) is tracked; \
                 only image and font fixtures under tests/ or fixtures/ may be binary",
                "crates/x/src/logo.png: a binary file (a NUL byte in its first 8 KB) is tracked; \
                 only image and font fixtures under tests/ or fixtures/ may be binary",
                "crates/x/tests/data.bin: a binary file (a NUL byte in its first 8 KB) is \
                 tracked; only image and font fixtures under tests/ or fixtures/ may be binary",
            ]
        );
    }

    #[test]
    fn a_source_over_1500_lines_is_refused_and_other_files_are_not() {
        let long = "x\n".repeat(MAX_LINES + 1);
        let limit = "x\n".repeat(MAX_LINES);
        let sources = [
            ("crates/x/src/big.rs".to_owned(), long.clone()),
            ("scripts/big.sh".to_owned(), long.clone()),
            ("crates/x/src/ok.py".to_owned(), limit),
            ("docs/long.md".to_owned(), long.clone()),
            ("Cargo.lock".to_owned(), long),
        ];
        assert_eq!(
            long_sources(&sources),
            [
                "crates/x/src/big.rs: 1501 lines (the limit is 1500); split it by subject into a \
                 module directory",
                "scripts/big.sh: 1501 lines (the limit is 1500); split it by subject into a \
                 module directory",
            ]
        );
    }

    const ARCH: &str = "# Architecture\n\n### `hands-core` (public API boundary)\nText.\n\n\
        ### `hands-x11`\nText.\n\n### `hands` (binary)\nText.\n\n\
        ### The differential suite (`difftest/`, not a crate)\n\n\
        ## Dependency directions\n\n```\n\
        hands (bin) ──> hands-x11, hands-core\n\
        hands-x11   ──> hands-core (the vocabulary, and more)\n\
        hands       ──(dev)──> hands-x11\n\
        hands-core  ──> (no hands crate)\n```\n\nMore prose ──> not an arrow.\n";

    fn dirs(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn every_crate_has_a_heading_and_every_heading_a_crate() {
        assert!(crates_named(&dirs(&["hands", "hands-core", "hands-x11"]), ARCH).is_empty());
        assert_eq!(
            crates_named(&dirs(&["hands", "hands-core", "hands-cdp"]), ARCH),
            [
                "crates/hands-cdp: no `### `hands-cdp`` heading in ARCHITECTURE.md; say what it \
                 owns there",
                "ARCHITECTURE.md: the heading `### `hands-x11`` names no crate under crates/; \
                 remove it or fix the name",
            ]
        );
    }

    #[test]
    fn the_dependency_block_is_parsed_line_by_line() {
        let parsed = arrows(ARCH).unwrap();
        let s = |v: &[&str]| v.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            parsed
                .iter()
                .map(|a| (a.from.clone(), a.kind, a.to.clone()))
                .collect::<Vec<_>>(),
            [
                (s(&["hands"]), Kind::Normal, s(&["hands-x11", "hands-core"])),
                (s(&["hands-x11"]), Kind::Normal, s(&["hands-core"])),
                (s(&["hands"]), Kind::Dev, s(&["hands-x11"])),
                (s(&["hands-core"]), Kind::Normal, s(&[])),
            ]
        );
        assert_eq!(
            arrows("## Dependency directions\n```\nhands, hands-x11 ──> (no hands crate)\n```")
                .unwrap()[0]
                .from,
            s(&["hands", "hands-x11"])
        );
        assert!(
            arrows("# nothing")
                .unwrap_err()
                .contains("no `## Dependency directions`")
        );
        assert!(
            arrows("## Dependency directions\n```\nhands uses hands-core\n```")
                .unwrap_err()
                .contains("is not `A ──> B, C`")
        );
    }

    fn manifests(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
            .collect()
    }

    const CORE: &str = "[package]\nname = \"hands-core\"\n[dependencies]\nserde = \"1\"\n";
    const X11: &str = "[package]\nname = \"hands-x11\"\n\n[dependencies]\n\
        hands-core.workspace = true\nx11rb = \"0.14\"\n";
    const HANDS: &str = "[package]\nname = \"hands\"\n[dependencies]\nhands-core.workspace = true\n\
        hands-x11 = { path = \"../hands-x11\" }\n[dev-dependencies]\nhands-x11.workspace = true\n";

    #[test]
    fn a_true_dependency_block_passes() {
        let m = manifests(&[("hands", HANDS), ("hands-core", CORE), ("hands-x11", X11)]);
        assert_eq!(dependency_arrows(ARCH, &m), Vec::<String>::new());
    }

    #[test]
    fn an_arrow_the_manifest_contradicts_is_refused() {
        // hands-x11 without hands-core; hands-core gains a hands dependency; hands loses its
        // dev-dependency.
        let x11 = "[package]\nname = \"hands-x11\"\n[dependencies]\nx11rb = \"0.14\"\n";
        let core = "[dependencies]\nhands-jail.workspace = true\n";
        let hands = "[dependencies]\nhands-core.workspace = true\nhands-x11.workspace = true\n\
            [dev-dependencies.hands-core]\nworkspace = true\n";
        let m = manifests(&[("hands", hands), ("hands-core", core), ("hands-x11", x11)]);
        let found = dependency_arrows(ARCH, &m);
        assert_eq!(
            found,
            [
                "ARCHITECTURE.md:18: states `hands-x11 ──> hands-core`, but \
                 crates/hands-x11/Cargo.toml has no `hands-core` in [dependencies]; fix the \
                 arrow or the manifest",
                "ARCHITECTURE.md:19: states `hands ──> hands-x11`, but crates/hands/Cargo.toml \
                 has no `hands-x11` in [dev-dependencies]; fix the arrow or the manifest",
                "ARCHITECTURE.md:20: states `hands-core` depends on no hands crate, but \
                 crates/hands-core/Cargo.toml has `hands-jail` in [dependencies]",
                "crates/hands-core/Cargo.toml: depends on `hands-jail`, which ARCHITECTURE.md's \
                 dependency block does not state; add `hands-core ──> hands-jail`",
            ]
        );
    }

    #[test]
    fn an_unstated_dependency_or_crate_is_refused() {
        let x11 = "[dependencies]\nhands-core.workspace = true\nhands-jail.workspace = true\n";
        let m = manifests(&[
            ("hands", HANDS),
            ("hands-core", CORE),
            ("hands-x11", x11),
            ("hands-jail", "[dependencies]\n"),
        ]);
        assert_eq!(
            dependency_arrows(ARCH, &m),
            [
                "ARCHITECTURE.md: no `hands-jail ──> …` line under `## Dependency directions`; \
                 add one (`(no hands crate)` when it has none)",
                "crates/hands-x11/Cargo.toml: depends on `hands-jail`, which ARCHITECTURE.md's \
                 dependency block does not state; add `hands-x11 ──> hands-jail`",
            ]
        );
        let unknown = "## Dependency directions\n```\nhands-nope ──> hands-core\n```\n";
        assert!(
            dependency_arrows(unknown, &m).contains(
                &"ARCHITECTURE.md:3: `hands-nope` is not a crate under crates/".to_owned()
            )
        );
        let broken = manifests(&[("hands-core", "[dependencies\n")]);
        let found = dependency_arrows(
            "## Dependency directions\n```\nhands-core ──> (no hands crate)\n```\n",
            &broken,
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("crates/hands-core/Cargo.toml: not TOML"));
    }

    fn stems() -> BTreeSet<String> {
        ["api-contracts", "claude-computer-use-tool"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect()
    }

    #[test]
    fn spec_stems_drop_every_extension() {
        assert_eq!(
            spec_stem("docs/spec/claude-computer-use-tool.es.md"),
            Some("claude-computer-use-tool")
        );
        assert_eq!(
            spec_stem("docs/spec/api-contracts.md"),
            Some("api-contracts")
        );
        assert_eq!(spec_stem("docs/spec/old/x.md"), None);
        assert_eq!(spec_stem("docs/decisions.md"), None);
    }

    #[test]
    fn a_citation_must_name_a_spec_file_first() {
        let text = [
            format!("//! {MARK} claude-computer-use-tool, precautions 1 and 3."),
            format!("/// {MARK} api-contracts A, \"Errors\"."),
            format!("    /// zero. {MARK} api-contracts."),
            format!("/// {MARK} Claude computer use, the bash tool."),
            format!("/// {MARK} api-contracts.md B."),
            format!("// {MARK} \"navigate\"."),
            format!("let spec = Process{MARK}:new(\"x\"); // a {MARK}:path is no citation"),
            format!("let s = \"{MARK} nowhere\"; // not a comment before it"),
            format!("// {MARK}"),
        ]
        .join("\n");
        let py = format!("x = 1  # {MARK} nowhere, \"a\"\n");
        let md = format!("{MARK} nowhere\n");
        let sources = [
            ("crates/x/src/a.rs".to_owned(), text),
            ("scripts/b.py".to_owned(), py),
            ("docs/c.md".to_owned(), md),
        ];
        let found = spec_citations(&sources, &stems());
        let stems = stems();
        assert_eq!(
            found,
            [
                format!(
                    "crates/x/src/a.rs:4: the spec citation names `Claude`, not a file in \
                     docs/spec/; start it with one of {stems:?}"
                ),
                format!(
                    "crates/x/src/a.rs:5: the spec citation names `api-contracts.md`, not a file \
                     in docs/spec/; start it with one of {stems:?}"
                ),
                format!(
                    "crates/x/src/a.rs:6: the spec citation names `\"navigate\"`, not a file in \
                     docs/spec/; start it with one of {stems:?}"
                ),
                format!(
                    "crates/x/src/a.rs:9: the spec citation names ``, not a file in docs/spec/; \
                     start it with one of {stems:?}"
                ),
                format!(
                    "scripts/b.py:1: the spec citation names `nowhere`, not a file in \
                     docs/spec/; start it with one of {stems:?}"
                ),
            ]
        );
    }

    /// A function `name` of exactly `n_lines` lines, from `fn` to the closing brace, indented
    /// by `indent`; its body holds a string with an unbalanced brace, which a brace counter
    /// would trip on.
    fn function(indent: &str, name: &str, n_lines: usize) -> String {
        let mut text = format!("{indent}fn {name}() {{\n{indent}    let _ = \"{{\";\n");
        for _ in 0..n_lines - 3 {
            text.push_str(&format!("{indent}    let _ = 1;\n"));
        }
        text.push_str(&format!("{indent}}}\n"));
        text
    }

    fn source(path: &str, text: String) -> (String, String) {
        (path.to_owned(), text)
    }

    #[test]
    fn a_function_over_150_lines_is_refused_and_one_of_150_is_not() {
        assert_eq!(function("", "f", 151).lines().count(), 151);
        let text = format!(
            "//! A file.\n\n{}\n{}",
            function("", "at_the_limit", MAX_FN_LINES),
            function("", "over_the_limit", MAX_FN_LINES + 1)
        );
        assert_eq!(
            long_functions(&[source("crates/x/src/lib.rs", text)]),
            [
                "crates/x/src/lib.rs:154: fn `over_the_limit` is 151 lines (the limit is 150); \
              split it into named helpers, one per concern"
            ]
        );
    }

    #[test]
    fn methods_of_impl_and_trait_blocks_are_functions_too() {
        let text = format!(
            "struct S;\nimpl S {{\n{}}}\ntrait T {{\n{}}}\n",
            function("    ", "method", 151),
            function("    ", "provided", 151)
        );
        assert_eq!(
            long_functions(&[source("crates/x/src/s.rs", text)]),
            [
                "crates/x/src/s.rs:3: fn `method` is 151 lines (the limit is 150); split it \
                 into named helpers, one per concern",
                "crates/x/src/s.rs:156: fn `provided` is 151 lines (the limit is 150); split it \
                 into named helpers, one per concern",
            ]
        );
    }

    #[test]
    fn test_code_is_not_measured() {
        let long = || function("", "long", 151);
        let sources = [
            source("crates/x/tests/e2e.rs", long()),
            source("crates/x/src/browser/tests.rs", long()),
            source("crates/x/benches/speed.rs", long()),
            source(
                "crates/x/src/a.rs",
                format!("#[cfg(test)]\nmod tests {{\n{}}}\n", long()),
            ),
            source("crates/x/src/b.rs", format!("#[test]\n{}", long())),
            source("crates/x/src/c.rs", format!("#[tokio::test]\n{}", long())),
            source(
                "crates/x/src/d.rs",
                format!("#[cfg(all(test, unix))]\n{}", long()),
            ),
            source("crates/x/src/e.rs", format!("#![cfg(test)]\n{}", long())),
            // Outside `crates/`, and not Rust.
            source("scripts/tool.rs", long()),
            source("crates/x/src/tool.py", long()),
        ];
        assert!(long_functions(&sources).is_empty());
        // Compiled outside tests too: measured.
        let sources = [
            source(
                "crates/x/src/f.rs",
                format!("#[cfg(not(test))]\n{}", long()),
            ),
            source(
                "crates/x/src/g.rs",
                format!("#[cfg(any(test, unix))]\n{}", long()),
            ),
            source(
                "crates/x/src/h.rs",
                format!("#[cfg(feature = \"x\")]\n{}", long()),
            ),
        ];
        assert_eq!(long_functions(&sources).len(), 3);
    }

    #[test]
    fn a_source_that_does_not_parse_is_reported() {
        let sources = [
            source("crates/x/src/item.rs", "fn f() {}\nlet x = 1;\n".to_owned()),
            source("crates/x/src/brace.rs", "fn f() {\n".to_owned()),
        ];
        let found = long_functions(&sources);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found[0].starts_with("crates/x/src/item.rs:2:1: does not parse as Rust (expected "),
            "{found:?}"
        );
        assert!(
            found[1].starts_with("crates/x/src/brace.rs:1:")
                && found[1].ends_with("so its functions cannot be measured"),
            "{found:?}"
        );
    }
}
