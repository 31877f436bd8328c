//! The colour grid the recorder's window shows: a pure function of the screen position, so a test
//! can check any captured pixel without reading the window back.

/// A grid of square cells, each one solid colour, every cell a different colour.
///
/// The colour of a cell is its index `row · 4096 + column` multiplied by an odd constant modulo
/// 2²⁴: a bijection on 24-bit values, so no two cells of a screen up to 4096 cells wide and tall
/// share a colour, and neighbouring cells differ in every channel (a cell's right neighbour
/// differs by `0x37`, `0x79`, `0xb1` in red, green, blue before carries), which makes an
/// off-by-one-cell mistake visible even through a blurring downscale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pattern {
    cell: u32,
}

/// The cell size used unless a test asks for another: large enough that a screenshot scaled down
/// 3–4× (3440 px to 1024 px) still has cell interiors of unblurred colour.
pub const DEFAULT_CELL: u32 = 32;

/// Odd, so multiplication by it permutes the 24-bit values.
const MIX: u32 = 0x9e37_79b1;

impl Pattern {
    /// A grid of `cell`×`cell` pixel squares (`cell` at least 1).
    pub fn new(cell: u32) -> Pattern {
        Pattern { cell: cell.max(1) }
    }

    /// The side of one cell, in pixels.
    pub fn cell(self) -> u32 {
        self.cell
    }

    /// The cell (column, row) holding screen pixel `(x, y)`.
    pub fn cell_of(self, x: u32, y: u32) -> (u32, u32) {
        (x / self.cell, y / self.cell)
    }

    /// The colour of cell `(column, row)` as RGB.
    pub fn cell_rgb(self, column: u32, row: u32) -> [u8; 3] {
        let index = (row % 4096) * 4096 + column % 4096;
        let c = index.wrapping_mul(MIX) & 0x00ff_ffff;
        [(c >> 16) as u8, (c >> 8) as u8, c as u8]
    }

    /// The colour at screen pixel `(x, y)` as RGB.
    pub fn rgb_at(self, x: u32, y: u32) -> [u8; 3] {
        let (column, row) = self.cell_of(x, y);
        self.cell_rgb(column, row)
    }

    /// How far `(x, y)` lies inside its cell: the distance in pixels to the nearest cell edge
    /// (0 on the cell's first or last row or column). Samples at least a few pixels inside are
    /// immune to the blur of scaling.
    pub fn inset(self, x: f64, y: f64) -> f64 {
        let c = f64::from(self.cell);
        let along = |v: f64| {
            let r = v.rem_euclid(c);
            r.min(c - r)
        };
        along(x).min(along(y))
    }
}

impl Default for Pattern {
    fn default() -> Pattern {
        Pattern::new(DEFAULT_CELL)
    }
}

/// The largest difference between two colours over the three channels.
pub fn channel_distance(a: [u8; 3], b: [u8; 3]) -> u8 {
    a.iter()
        .zip(b.iter())
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_cell_of_a_large_screen_has_its_own_colour() {
        let pattern = Pattern::new(8);
        let mut seen = HashSet::new();
        for row in 0..(2160 / 8) {
            for column in 0..(4096 / 8) {
                assert!(
                    seen.insert(pattern.cell_rgb(column, row)),
                    "({column}, {row})"
                );
            }
        }
    }

    #[test]
    fn neighbours_differ_clearly() {
        let pattern = Pattern::default();
        for row in 0..60 {
            for column in 0..120 {
                let here = pattern.cell_rgb(column, row);
                assert!(channel_distance(here, pattern.cell_rgb(column + 1, row)) >= 16);
                assert!(channel_distance(here, pattern.cell_rgb(column, row + 1)) >= 16);
            }
        }
    }

    #[test]
    fn cells_and_insets() {
        let pattern = Pattern::new(32);
        assert_eq!(pattern.cell_of(31, 32), (0, 1));
        assert_eq!(pattern.rgb_at(0, 0), pattern.rgb_at(31, 31));
        assert_ne!(pattern.rgb_at(31, 0), pattern.rgb_at(32, 0));
        assert_eq!(pattern.inset(16.0, 16.0), 16.0);
        assert_eq!(pattern.inset(33.0, 50.0), 1.0);
        assert_eq!(pattern.inset(64.0, 50.0), 0.0);
    }
}
