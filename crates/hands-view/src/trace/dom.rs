//! A trace's DOM snapshots (`dom/`): read from the run directory, fitted to a budget, and
//! stored as whole documents or as a delta from the snapshot before (`HASH.html.delta`: the
//! common prefix and suffix with that one, and what differs between), since gzip's 32 KB window
//! cannot see a repeat of a larger document. [`unpack`] rebuilds every snapshot whole.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{TraceError, io};

/// Where a run directory and a trace keep the DOM snapshots.
pub const DOM_DIR: &str = "dom";
/// The compressed bytes of DOM snapshots a trace keeps by default: with the screenshots' worst
/// case (docs/trace-format.md, "Size") a 50-step trace stays within 2 MB.
pub const DOM_BUDGET: u64 = 600 * 1024;
/// The prefix a left-out snapshot's log line is renamed to (the viewer shows no link).
const DOM_OMITTED: &str = "dom-omitted/";
/// The ending of a delta entry's name (after the snapshot's own name).
const DELTA: &str = ".delta";
/// The longest chain of deltas a reader follows.
const MAX_CHAIN: usize = 10_000;

/// How many DOM snapshots a trace holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DomInTrace {
    /// All of them while their compressed size is within `budget` bytes; beyond it, every
    /// other one is left out (the last kept), again until they fit.
    Fit {
        /// Compressed bytes.
        budget: u64,
    },
    /// Every one (`hands runs export --as-seen`).
    All,
}

impl Default for DomInTrace {
    fn default() -> Self {
        DomInTrace::Fit { budget: DOM_BUDGET }
    }
}

/// A snapshot stored as the one before it with its middle replaced.
#[derive(Debug, Serialize, Deserialize)]
struct Delta {
    /// The snapshot it is made from (`HASH.html`).
    base: String,
    /// Bytes of the base kept at the start.
    prefix: usize,
    /// Bytes of the base kept at the end.
    suffix: usize,
    /// What comes between.
    middle: String,
}

/// The run directory's DOM snapshots (`dom/HASH.html`), by name; text that is not UTF-8 is
/// left out.
pub(super) fn read_doms(dom: &Path) -> Result<BTreeMap<String, String>, TraceError> {
    let mut out = BTreeMap::new();
    let entries = match std::fs::read_dir(dom) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(io(dom)(e)),
    };
    for entry in entries {
        let path = entry.map_err(io(dom))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if crate::steps::dom_name_ok(name)
            && let Ok(text) = String::from_utf8(std::fs::read(&path).map_err(io(&path))?)
        {
            out.insert(name.to_owned(), text);
        }
    }
    Ok(out)
}

/// The entries to store under `dom/` and how many snapshots they hold.
pub(super) struct Packed {
    /// Entry name (without `dom/`) and bytes.
    pub entries: BTreeMap<String, Vec<u8>>,
    /// Snapshots kept.
    pub kept: usize,
}

/// `new` as a delta from `base`: their common prefix and suffix, at character boundaries.
fn delta(base_name: &str, base: &str, new: &str) -> Delta {
    let mut prefix = base
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !(base.is_char_boundary(prefix) && new.is_char_boundary(prefix)) {
        prefix -= 1;
    }
    let room = base.len().min(new.len()) - prefix;
    let mut suffix = base
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    while !(base.is_char_boundary(base.len() - suffix) && new.is_char_boundary(new.len() - suffix))
    {
        suffix -= 1;
    }
    Delta {
        base: base_name.to_owned(),
        prefix,
        suffix,
        middle: new[prefix..new.len() - suffix].to_owned(),
    }
}

/// The snapshots `order` names, each whole or as a delta from the one before it when that is
/// less than half its size.
fn encode(order: &[String], doms: &BTreeMap<String, String>) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut before: Option<&String> = None;
    for name in order {
        let html = &doms[name];
        let as_delta = before.and_then(|base| {
            let d = serde_json::to_vec(&delta(base, &doms[base], html)).ok()?;
            (d.len() < html.len() / 2).then_some(d)
        });
        match as_delta {
            Some(d) => out.insert(format!("{name}{DELTA}"), d),
            None => out.insert(name.clone(), html.clone().into_bytes()),
        };
        before = Some(name);
    }
    out
}

fn gz_len(bytes: &[u8]) -> u64 {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let _ = gz.write_all(bytes);
    gz.finish().map_or(bytes.len(), |b| b.len()) as u64
}

/// Chooses the snapshots a trace keeps and encodes them: all of them when they fit the budget
/// (compressed), else every other one left out (the last kept) until they fit, evenly through
/// the run in the order the log first names them. The log's lines of the left-out ones are
/// renamed `dom-omitted/…`.
pub(super) fn fit(doms: &BTreeMap<String, String>, log: &mut String, how: DomInTrace) -> Packed {
    let mut order: Vec<String> = Vec::new();
    for line in log.lines().filter(|l| l.contains("\"kind\":\"dom\"")) {
        let entry: Value = serde_json::from_str(line).unwrap_or_default();
        if let Some(name) = entry["file"].as_str().and_then(|f| f.strip_prefix("dom/"))
            && doms.contains_key(name)
            && !order.iter().any(|n| n == name)
        {
            order.push(name.to_owned());
        }
    }
    let mut kept = order;
    let mut entries = encode(&kept, doms);
    if let DomInTrace::Fit { budget } = how {
        let size =
            |entries: &BTreeMap<String, Vec<u8>>| entries.values().map(|b| gz_len(b)).sum::<u64>();
        while kept.len() > 1 && size(&entries) > budget {
            let last = kept.len() - 1;
            kept = kept
                .into_iter()
                .enumerate()
                .filter(|(i, _)| i % 2 == 1 || *i == last)
                .map(|(_, n)| n)
                .collect();
            entries = encode(&kept, doms);
        }
        if size(&entries) > budget {
            kept.clear();
            entries.clear();
        }
    }
    for name in doms.keys() {
        if !kept.contains(name) {
            *log = log.replace(&format!("dom/{name}"), &format!("{DOM_OMITTED}{name}"));
        }
    }
    Packed {
        entries,
        kept: kept.len(),
    }
}

/// Every snapshot of a trace's entries (`dom/HASH.html` whole, `dom/HASH.html.delta` rebuilt
/// from its base), by name without `dom/`. A delta whose base is missing, that does not fit its
/// base, or a chain longer than [`MAX_CHAIN`] or circular is an error.
pub(super) fn unpack(
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut whole: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut deltas: BTreeMap<String, Delta> = BTreeMap::new();
    for (name, bytes) in files {
        let Some(file) = name.strip_prefix(DOM_DIR).and_then(|n| n.strip_prefix('/')) else {
            continue;
        };
        if crate::steps::dom_name_ok(file) {
            whole.insert(file.to_owned(), bytes.clone());
        } else if let Some(of) = file.strip_suffix(DELTA)
            && crate::steps::dom_name_ok(of)
        {
            let d: Delta = serde_json::from_slice(bytes).map_err(|e| format!("{name}: {e}"))?;
            deltas.insert(of.to_owned(), d);
        }
    }
    let names: Vec<String> = deltas.keys().cloned().collect();
    for name in names {
        // Follow the chain down to a whole snapshot, then rebuild up it.
        if whole.contains_key(&name) {
            continue;
        }
        let mut chain = vec![name.clone()];
        while let Some(d) = chain.last().and_then(|link| deltas.get(link)) {
            if whole.contains_key(&d.base) {
                break;
            }
            if !deltas.contains_key(&d.base) {
                return Err(format!("dom/{name}{DELTA}: no base {:?}", d.base));
            }
            if chain.len() > MAX_CHAIN || chain.contains(&d.base) {
                return Err(format!(
                    "dom/{name}{DELTA}: a chain of deltas without an end"
                ));
            }
            chain.push(d.base.clone());
        }
        for link in chain.into_iter().rev() {
            let Some(d) = deltas.get(&link) else {
                return Err(format!("dom/{link}{DELTA}: missing"));
            };
            let base = whole
                .get(&d.base)
                .ok_or_else(|| format!("dom/{link}{DELTA}: no base {:?}", d.base))?;
            if d.prefix + d.suffix > base.len() {
                return Err(format!("dom/{link}{DELTA}: longer than its base"));
            }
            let mut html = base[..d.prefix].to_vec();
            html.extend_from_slice(d.middle.as_bytes());
            html.extend_from_slice(&base[base.len() - d.suffix..]);
            whole.insert(link, html);
        }
    }
    Ok(whole)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delta_rebuilds_its_snapshot_at_character_boundaries() {
        for (base, new) in [
            (
                "<title>Dense 1</title><p>é text</p>",
                "<title>Dense 2</title><p>é text</p>",
            ),
            ("aé", "aè"),
            ("same", "same"),
            ("", "new"),
            ("old", ""),
            ("abcabc", "abc"),
            ("✓✓", "✓x✓"),
        ] {
            let d = delta("0000000000000000.html", base, new);
            let files = BTreeMap::from([
                (
                    "dom/0000000000000000.html".to_owned(),
                    base.as_bytes().to_vec(),
                ),
                (
                    "dom/1111111111111111.html.delta".to_owned(),
                    serde_json::to_vec(&d).unwrap(),
                ),
            ]);
            let out = unpack(&files).unwrap();
            assert_eq!(
                out["1111111111111111.html"],
                new.as_bytes(),
                "{base:?} → {new:?}"
            );
        }
    }

    #[test]
    fn a_broken_delta_is_an_error_not_a_panic() {
        let entry = |base: &str, prefix: usize| {
            serde_json::to_vec(&Delta {
                base: base.into(),
                prefix,
                suffix: 0,
                middle: String::new(),
            })
            .unwrap()
        };
        let cases = [
            // No base.
            vec![(
                "dom/1111111111111111.html.delta",
                entry("2222222222222222.html", 0),
            )],
            // Longer than its base.
            vec![
                ("dom/0000000000000000.html", b"ab".to_vec()),
                (
                    "dom/1111111111111111.html.delta",
                    entry("0000000000000000.html", 3),
                ),
            ],
            // A cycle.
            vec![
                (
                    "dom/1111111111111111.html.delta",
                    entry("2222222222222222.html", 0),
                ),
                (
                    "dom/2222222222222222.html.delta",
                    entry("1111111111111111.html", 0),
                ),
            ],
            // Not JSON.
            vec![("dom/1111111111111111.html.delta", b"{".to_vec())],
        ];
        for case in cases {
            let files: BTreeMap<String, Vec<u8>> =
                case.into_iter().map(|(n, b)| (n.to_owned(), b)).collect();
            assert!(unpack(&files).is_err(), "{files:?}");
        }
    }
}
