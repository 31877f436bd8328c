//! `view` of a directory: its non-hidden entries two levels deep, as the reference's
//! `find PATH -maxdepth 2 -not -path '*/\.*'` lists them, but sorted and without a process.

use std::ffi::OsString;
use std::path::Path;

use super::beneath;
use super::paths::Place;

/// The listing's lines: the directory itself, then each entry, each directory's entries right
/// after it. Hidden names (a leading `.`) are skipped at both levels; symlinks to directories
/// are listed but not entered (as `find` does not follow them). The listed directory itself
/// may be hidden (the reference's filter drops everything then).
///
/// Under a root, each directory is opened beneath the root's fd without following symlinks.
pub(crate) fn list(place: &Place, shown: &Path) -> std::io::Result<Vec<String>> {
    let entries_of = |name: Option<&std::ffi::OsStr>| match (place, name) {
        (Place::Host(real), None) => visible_entries(real),
        (Place::Host(real), Some(name)) => visible_entries(&real.join(name)),
        (Place::Beneath { root, rest }, None) => beneath::visible_entries(root, rest),
        (Place::Beneath { root, rest }, Some(name)) => {
            beneath::visible_entries(root, &rest.join(name))
        }
    };
    let mut lines = vec![shown.display().to_string()];
    for (name, is_dir) in entries_of(None)? {
        let shown_entry = shown.join(&name);
        lines.push(shown_entry.display().to_string());
        if !is_dir {
            continue;
        }
        match entries_of(Some(&name)) {
            Ok(children) => lines.extend(
                children
                    .into_iter()
                    .map(|(child, _)| shown_entry.join(child).display().to_string()),
            ),
            // `find` reports the error and goes on; so does this listing, in place.
            Err(err) => lines.push(format!(
                "{} (cannot list its entries: {err})",
                shown_entry.display()
            )),
        }
    }
    Ok(lines)
}

/// Non-hidden entries, sorted by name, and whether each is a directory (not following links).
fn visible_entries(dir: &Path) -> std::io::Result<Vec<(OsString, bool)>> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name.as_encoded_bytes().starts_with(b".") {
            continue;
        }
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        entries.push((name, is_dir));
    }
    entries.sort();
    Ok(entries)
}
