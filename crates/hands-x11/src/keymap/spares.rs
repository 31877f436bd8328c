//! Spare keycodes as slots for keysyms the layout lacks: which keysym each slot holds, which
//! slots were pressed since clients last proved they had read their keys, and the plan that
//! binds the next stretch of a text in one mapping change.
//!
//! A spare keycode holds two slots: level 0 (pressed alone) and level 1 (pressed with Shift), so
//! 21 spare keycodes hold 42 keysyms at once. A slot's keysym may change only when no press of
//! it is pending: a client translates a key event with the mapping it fetched last, and fetches
//! the *current* one when it gets to a MappingNotify, so rebinding a keycode whose press a client
//! has not translated yet changes the character it reads. Presses carry a sequence number; the
//! driver proves a client caught up to a sequence number (see `catchup`) before a plan may take a
//! slot pressed after it.

use std::collections::{HashMap, HashSet};

use x11rb::protocol::xproto::Keycode;

/// A place for a keysym: a spare keycode and a level (0 alone, 1 with Shift).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Slot {
    pub keycode: Keycode,
    pub level: u8,
}

#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    sym: Option<u32>,
    /// Use clock at the last use: least recently used slots are reused first.
    last_used: u64,
    /// Sequence number of the last press of this slot (0: never pressed).
    last_press: u64,
}

/// New contents for some slots, to be sent in one mapping change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Slots and the keysym each will hold.
    pub binds: Vec<(Slot, u32)>,
    /// Whether a slot in `binds` was pressed after the last proof: clients must be shown to
    /// have caught up first.
    pub needs_proof: bool,
    /// How many of the upcoming keysyms the bindings (with those already in place) cover.
    pub covered: usize,
}

/// The spare keycodes and what they hold.
#[derive(Debug, Clone, Default)]
pub(crate) struct Spares {
    keycodes: Vec<Keycode>,
    levels: u8,
    entries: HashMap<Slot, Entry>,
    by_sym: HashMap<u32, Slot>,
    clock: u64,
}

impl Spares {
    /// Spare keycodes holding `levels` (1 or 2) slots each.
    pub(crate) fn new(keycodes: Vec<Keycode>, levels: u8) -> Spares {
        let mut spares = Spares {
            keycodes: Vec::new(),
            levels: levels.clamp(1, 2),
            entries: HashMap::new(),
            by_sym: HashMap::new(),
            clock: 0,
        };
        spares.set_keycodes(keycodes);
        spares
    }

    /// Replaces the set of spare keycodes (after the layout changed); slots on keycodes that
    /// are no longer spare are forgotten.
    pub(crate) fn set_keycodes(&mut self, mut keycodes: Vec<Keycode>) {
        keycodes.sort_unstable();
        keycodes.dedup();
        self.entries
            .retain(|slot, _| keycodes.contains(&slot.keycode));
        for &keycode in &keycodes {
            for level in 0..self.levels {
                self.entries.entry(Slot { keycode, level }).or_default();
            }
        }
        self.keycodes = keycodes;
        self.reindex();
    }

    fn reindex(&mut self) {
        self.by_sym = self
            .entries
            .iter()
            .filter_map(|(slot, e)| e.sym.map(|s| (s, *slot)))
            .collect();
    }

    /// The spare keycodes.
    pub(crate) fn keycodes(&self) -> &[Keycode] {
        &self.keycodes
    }

    /// How many keysyms can be bound at once.
    pub(crate) fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// The slot holding `sym`.
    pub(crate) fn find(&self, sym: u32) -> Option<Slot> {
        self.by_sym.get(&sym).copied()
    }

    /// What `keycode`'s levels hold, level 0 first, without trailing empty levels.
    pub(crate) fn levels_of(&self, keycode: Keycode) -> Vec<u32> {
        let mut levels: Vec<u32> = (0..self.levels)
            .map(|level| {
                self.entries
                    .get(&Slot { keycode, level })
                    .and_then(|e| e.sym)
                    .unwrap_or(0)
            })
            .collect();
        while levels.last() == Some(&0) {
            levels.pop();
        }
        levels
    }

    /// Whether a chord may press `slot` with any modifiers and read its keysym: level 0 of a
    /// keycode with nothing on level 1.
    pub(crate) fn is_single(&self, slot: Slot) -> bool {
        slot.level == 0 && self.levels_of(slot.keycode).len() <= 1
    }

    /// Records a press of `slot` as input number `seq`, and a use for the LRU order.
    pub(crate) fn pressed(&mut self, slot: Slot, seq: u64) {
        self.clock += 1;
        if let Some(e) = self.entries.get_mut(&slot) {
            e.last_press = seq;
            e.last_used = self.clock;
        }
    }

    /// Records a press of `keycode` with modifiers a level may not account for (a chord): every
    /// level of the keycode counts as pressed.
    pub(crate) fn pressed_keycode(&mut self, keycode: Keycode, seq: u64) {
        for level in 0..self.levels {
            self.pressed(Slot { keycode, level }, seq);
        }
    }

    fn reusable(&self, slot: Slot, proven: u64) -> bool {
        self.entries
            .get(&slot)
            .is_some_and(|e| e.last_press <= proven)
    }

    /// Whether any bound slot was pressed after `proven`: clients may still translate it.
    pub(crate) fn any_unproven(&self, proven: u64) -> bool {
        self.entries
            .values()
            .any(|e| e.sym.is_some() && e.last_press > proven)
    }

    /// Slots to reuse, best first: empty ones (level 0 before level 1, so lone bindings stay
    /// one-level), then bound ones least recently used first.
    fn candidates(&self) -> Vec<Slot> {
        let mut slots: Vec<(Slot, &Entry)> = self.entries.iter().map(|(s, e)| (*s, e)).collect();
        slots.sort_by_key(|(slot, e)| {
            let bound = e.sym.is_some();
            (
                bound,
                if bound { e.last_used } else { 0 },
                slot.level,
                slot.keycode,
            )
        });
        slots.into_iter().map(|(s, _)| s).collect()
    }

    /// Bindings for the stretch of `upcoming` keysyms (in the order they will be pressed, each
    /// needing a spare) that fits: the stretch ends before the first keysym for which no slot is
    /// left, every keysym bound somewhere in it stays bound, and new ones take empty slots, then
    /// the least recently used. `proven` is the last input sequence number clients are known to
    /// have translated.
    pub(crate) fn plan(&self, upcoming: &[u32], proven: u64) -> Plan {
        // The stretch: as many keysyms as there are distinct ones within capacity.
        let mut distinct: HashSet<u32> = HashSet::new();
        let mut covered = 0;
        for &sym in upcoming {
            if !distinct.contains(&sym) {
                if distinct.len() == self.capacity() {
                    break;
                }
                distinct.insert(sym);
            }
            covered += 1;
        }
        let kept: HashSet<Slot> = distinct.iter().filter_map(|s| self.find(*s)).collect();
        let mut free = self
            .candidates()
            .into_iter()
            .filter(|slot| !kept.contains(slot));
        let mut plan = Plan {
            covered,
            ..Plan::default()
        };
        let mut planned: HashSet<u32> = HashSet::new();
        for &sym in &upcoming[..covered] {
            if self.find(sym).is_some() || !planned.insert(sym) {
                continue;
            }
            let Some(slot) = free.next() else {
                // Cannot happen: the stretch holds at most `capacity` distinct keysyms.
                plan.covered = 0;
                break;
            };
            plan.needs_proof |= !self.reusable(slot, proven);
            plan.binds.push((slot, sym));
        }
        plan
    }

    /// A binding of `sym` alone on a keycode (both levels free), for a chord that presses it
    /// with any modifiers; `keep` lists keycodes the chord already uses. A slot that holds `sym`
    /// with another keysym beside it is emptied: a keysym has one slot.
    pub(crate) fn plan_single(&self, sym: u32, keep: &[Keycode], proven: u64) -> Option<Plan> {
        let keycode_rank = |keycode: Keycode| {
            let levels: Vec<&Entry> = (0..self.levels)
                .filter_map(|level| self.entries.get(&Slot { keycode, level }))
                .collect();
            let bound = levels.iter().filter(|e| e.sym.is_some()).count();
            let last_used = levels.iter().map(|e| e.last_used).max().unwrap_or(0);
            (bound, last_used, keycode)
        };
        let keycode = self
            .keycodes
            .iter()
            .copied()
            .filter(|k| !keep.contains(k))
            .min_by_key(|k| keycode_rank(*k))?;
        let mut plan = Plan {
            covered: 1,
            ..Plan::default()
        };
        for level in 0..self.levels {
            let slot = Slot { keycode, level };
            let bound = self.entries.get(&slot).is_some_and(|e| e.sym.is_some());
            if level == 0 || bound {
                plan.needs_proof |= !self.reusable(slot, proven);
            }
            if level == 0 {
                plan.binds.push((slot, sym));
            } else if bound {
                plan.binds.push((slot, 0));
            }
        }
        if let Some(old) = self.find(sym).filter(|old| old.keycode != keycode) {
            plan.needs_proof |= !self.reusable(old, proven);
            plan.binds.push((old, 0));
        }
        Some(plan)
    }

    /// Applies a plan (once the mapping change is sent); returns the keycodes it changed.
    pub(crate) fn apply(&mut self, plan: &Plan) -> Vec<Keycode> {
        let mut changed = Vec::new();
        for &(slot, sym) in &plan.binds {
            if let Some(e) = self.entries.get_mut(&slot) {
                e.sym = (sym != 0).then_some(sym);
            }
            if !changed.contains(&slot.keycode) {
                changed.push(slot.keycode);
            }
        }
        self.reindex();
        changed.sort_unstable();
        changed
    }

    /// Forgets what `keycode` holds (someone else remapped it).
    pub(crate) fn forget(&mut self, keycode: Keycode) {
        for level in 0..self.levels {
            if let Some(e) = self.entries.get_mut(&Slot { keycode, level }) {
                e.sym = None;
            }
        }
        self.reindex();
    }

    /// Empties every slot; returns the keycodes that held something.
    pub(crate) fn clear(&mut self) -> Vec<Keycode> {
        let mut held: Vec<Keycode> = self
            .entries
            .iter()
            .filter(|(_, e)| e.sym.is_some())
            .map(|(slot, _)| slot.keycode)
            .collect();
        for e in self.entries.values_mut() {
            e.sym = None;
        }
        self.reindex();
        held.sort_unstable();
        held.dedup();
        held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syms(text: &str) -> Vec<u32> {
        text.chars().map(|c| 0x0100_0000 | c as u32).collect()
    }

    #[test]
    fn a_plan_covers_as_much_as_the_slots_hold() {
        let spares = Spares::new(vec![20, 10], 2);
        assert_eq!(spares.capacity(), 4);
        let text = syms("abacdaeb");
        let plan = spares.plan(&text, 0);
        // a b c d fit; e is the fifth distinct keysym.
        assert_eq!(plan.covered, 6);
        assert_eq!(plan.binds.len(), 4);
        assert!(!plan.needs_proof);
        // Level 0 slots first, lowest keycode first.
        assert_eq!(
            plan.binds[0].0,
            Slot {
                keycode: 10,
                level: 0
            }
        );
        assert_eq!(
            plan.binds[1].0,
            Slot {
                keycode: 20,
                level: 0
            }
        );
        let mut spares = spares;
        assert_eq!(spares.apply(&plan), vec![10, 20]);
        assert_eq!(spares.levels_of(10), syms("ac"));
        assert!(!spares.is_single(Slot {
            keycode: 10,
            level: 0
        }));
    }

    #[test]
    fn bound_keysyms_stay_and_pressed_slots_wait_for_proof() {
        let mut spares = Spares::new(vec![10, 11], 1);
        let plan = spares.plan(&syms("ab"), 0);
        spares.apply(&plan);
        let (a, b) = (
            spares.find(syms("a")[0]).expect("a"),
            spares.find(syms("b")[0]).expect("b"),
        );
        spares.pressed(a, 1);
        spares.pressed(b, 2);
        // "bc": b stays, c takes a's slot, which was pressed after the proof of 0.
        let plan = spares.plan(&syms("bc"), 0);
        assert_eq!(plan.binds, vec![(a, syms("c")[0])]);
        assert!(plan.needs_proof);
        assert!(!spares.plan(&syms("bc"), 1).needs_proof);
        assert!(spares.any_unproven(1));
        assert!(!spares.any_unproven(2));
        // Least recently used first: with nothing kept, a (used before b) goes first.
        let plan = spares.plan(&syms("x"), 2);
        assert_eq!(plan.binds, vec![(a, syms("x")[0])]);
    }

    #[test]
    fn single_bindings_take_a_whole_keycode() {
        let mut spares = Spares::new(vec![10, 11], 2);
        let plan = spares.plan(&syms("abc"), 0);
        spares.apply(&plan);
        // Keycode 11 holds one keysym, 10 two: 11 is the cheaper to clear, unless kept.
        let plan = spares.plan_single(syms("z")[0], &[], 0).expect("a keycode");
        assert_eq!(
            plan.binds[0],
            (
                Slot {
                    keycode: 11,
                    level: 0
                },
                syms("z")[0]
            )
        );
        let plan = spares
            .plan_single(syms("z")[0], &[11], 0)
            .expect("a keycode");
        assert_eq!(
            plan.binds,
            vec![
                (
                    Slot {
                        keycode: 10,
                        level: 0
                    },
                    syms("z")[0]
                ),
                (
                    Slot {
                        keycode: 10,
                        level: 1
                    },
                    0
                )
            ]
        );
        spares.apply(&plan);
        assert_eq!(spares.levels_of(10), syms("z"));
        assert!(spares.is_single(Slot {
            keycode: 10,
            level: 0
        }));
        assert_eq!(spares.plan_single(1, &[10, 11], 0), None);
        assert_eq!(spares.clear(), vec![10, 11]);
        assert_eq!(spares.find(syms("z")[0]), None);
    }
}
