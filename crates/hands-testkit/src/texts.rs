//! Texts that exercise typing: prose in four languages with combining marks, tabs and newlines,
//! and 300 distinct characters no keyboard layout has; distinct ideographs; plain ASCII.

/// A deterministic pseudo-random sequence (no dependency for a test text).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n
    }
}

/// 300 distinct characters none of the five layouts has: ideographs, Hangul, symbols, arrows,
/// mathematical operators, box drawing, dingbats.
pub fn missing_pool() -> Vec<char> {
    let ranges: [(u32, usize); 7] = [
        (0x4e00, 120),
        (0xac00, 40),
        (0x2190, 30),
        (0x2200, 40),
        (0x2500, 30),
        (0x2701, 25),
        (0x2600, 15),
    ];
    let mut pool: Vec<char> = ranges
        .iter()
        .flat_map(|&(start, n)| (0..n as u32).filter_map(move |i| char::from_u32(start + i)))
        .collect();
    pool.truncate(300);
    pool
}

/// The long mixed text: `n` characters of prose in English, German, French and Russian, with
/// combining marks, tabs and newlines, and the 300 missing characters spread through it.
pub fn long_mixed(n: usize) -> String {
    let words = [
        "the",
        "quick",
        "brown",
        "fox",
        "jumps",
        "over",
        "lazy",
        "dog",
        "Größe",
        "naïve",
        "façade",
        "déjà",
        "vu",
        "Москва",
        "привет",
        "мир",
        "Straße",
        "où",
        "ça",
        "Ärger",
        "Cafe\u{301}",
        "noe\u{308}l",
        "A\u{30a}ngstro\u{308}m",
        "e-mail@example.com",
        "{x}",
        "[1]",
        "50%",
        "x|y",
        "a\\b",
        "~",
        "$HOME",
        "#tag",
        "^_^",
        "«ok»",
        "5€",
    ];
    let pool = missing_pool();
    let mut rng = Lcg(9);
    let mut text = String::new();
    let mut used = 0;
    while text.chars().count() < n {
        if rng.next(2) == 0 {
            text.push_str(words[rng.next(words.len())]);
        } else {
            // Runs of one to three: every missing character appears at least once, in order,
            // then at random.
            for _ in 0..=rng.next(3) {
                let c = if used < pool.len() {
                    used += 1;
                    pool[used - 1]
                } else {
                    pool[rng.next(pool.len())]
                };
                text.push(c);
            }
        }
        text.push(match rng.next(20) {
            0 => '\n',
            1 => '\t',
            _ => ' ',
        });
    }
    text.chars().take(n).collect()
}

/// `n` distinct CJK ideographs from U+4E00.
pub fn cjk(n: u32) -> String {
    (0..n).filter_map(|i| char::from_u32(0x4e00 + i)).collect()
}

/// `n` characters of ASCII prose.
pub fn ascii(n: usize) -> String {
    "The quick brown fox jumps over the lazy dog; 0123456789 (ok) [x] {y} ~#@! "
        .chars()
        .cycle()
        .take(n)
        .collect()
}

/// How far `got` is from `want`: 0 when exact, else the positions that differ plus the length
/// difference.
pub fn wrong_positions(want: &str, got: &str) -> usize {
    let want: Vec<char> = want.chars().collect();
    let got: Vec<char> = got.chars().collect();
    let common = want.iter().zip(&got).filter(|(a, b)| a != b).count();
    common + want.len().abs_diff(got.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_long_text_holds_every_missing_character() {
        let text = long_mixed(2000);
        assert_eq!(text.chars().count(), 2000);
        let pool = missing_pool();
        assert_eq!(pool.len(), 300);
        let mut distinct = pool.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 300);
        assert!(pool.iter().all(|c| text.contains(*c)));
        assert!(text.contains('\u{301}') && text.contains('\n') && text.contains('\t'));
        assert_eq!(wrong_positions("abc", "abc"), 0);
        assert_eq!(wrong_positions("abc", "axcd"), 2);
    }
}
