//! The entries of an index by rel: a map in key order, kept as a sorted list until its shape
//! has to change.
//!
//! A loaded index is mostly read: a plan walks every entry in key order and looks a few up, and
//! only applying a sync's results adds or removes rels. A sorted list serves the reads as well as
//! a tree does (a walk is a slice walk, a look-up a binary search) and is far cheaper to build and
//! to drop: the parser's entries are already sorted into one, and a tree built from it moved
//! every entry again into nodes of its own. So the list is kept until the first insertion of a
//! new rel or removal of one (anything but an append at the end), which turns it into a tree
//! once, in one bulk build; from then on every change is the tree's. Changing an entry in place
//! ([`Entries::get_mut`], [`Entries::iter_mut`], an insert over an existing rel) never converts.

use std::collections::btree_map;
use std::collections::BTreeMap;
use std::fmt;

use super::IndexEntry;

/// Entries by rel, in key order (bytewise, as `String`'s `Ord`), each rel once.
#[derive(Clone, Default)]
pub struct Entries {
    store: Store,
}

#[derive(Clone)]
enum Store {
    /// Sorted by rel, no rel twice.
    Sorted(Vec<(String, IndexEntry)>),
    /// After the first change of shape.
    Tree(BTreeMap<String, IndexEntry>),
}

impl Default for Store {
    fn default() -> Self {
        Store::Sorted(Vec::new())
    }
}

impl Entries {
    /// No entries.
    pub fn new() -> Entries {
        Entries::default()
    }

    /// Entries from a list the caller has sorted by rel with no rel twice (the parser, which
    /// refuses a repeated rel before it gets here).
    pub(crate) fn from_sorted_unique(sorted: Vec<(String, IndexEntry)>) -> Entries {
        debug_assert!(sorted.windows(2).all(|pair| pair[0].0 < pair[1].0));
        Entries {
            store: Store::Sorted(sorted),
        }
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        match &self.store {
            Store::Sorted(list) => list.len(),
            Store::Tree(tree) => tree.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where `rel` is in the sorted list, or where it would go.
    fn search(list: &[(String, IndexEntry)], rel: &str) -> Result<usize, usize> {
        list.binary_search_by(|(key, _)| key.as_str().cmp(rel))
    }

    /// The entry of `rel`.
    pub fn get(&self, rel: &str) -> Option<&IndexEntry> {
        self.get_key_value(rel).map(|(_, entry)| entry)
    }

    /// The stored rel and entry of `rel`.
    pub fn get_key_value(&self, rel: &str) -> Option<(&String, &IndexEntry)> {
        match &self.store {
            Store::Sorted(list) => Entries::search(list, rel)
                .ok()
                .map(|at| (&list[at].0, &list[at].1)),
            Store::Tree(tree) => tree.get_key_value(rel),
        }
    }

    /// Whether `rel` has an entry.
    pub fn contains_key(&self, rel: &str) -> bool {
        self.get_key_value(rel).is_some()
    }

    /// The entry of `rel`, to change in place.
    pub fn get_mut(&mut self, rel: &str) -> Option<&mut IndexEntry> {
        match &mut self.store {
            Store::Sorted(list) => match Entries::search(list, rel) {
                Ok(at) => Some(&mut list[at].1),
                Err(_) => None,
            },
            Store::Tree(tree) => tree.get_mut(rel),
        }
    }

    /// Sets the entry of `rel`, returning the one it replaced.
    pub fn insert(&mut self, rel: String, entry: IndexEntry) -> Option<IndexEntry> {
        if let Store::Sorted(list) = &mut self.store {
            match Entries::search(list, &rel) {
                Ok(at) => return Some(std::mem::replace(&mut list[at].1, entry)),
                // After the last rel: the list stays sorted.
                Err(at) if at == list.len() => {
                    list.push((rel, entry));
                    return None;
                }
                Err(_) => {}
            }
        }
        self.in_tree(|tree| tree.insert(rel, entry))
    }

    /// Removes the entry of `rel`, returning it.
    pub fn remove(&mut self, rel: &str) -> Option<IndexEntry> {
        if let Store::Sorted(list) = &mut self.store {
            match Entries::search(list, rel) {
                Err(_) => return None,
                Ok(at) if at + 1 == list.len() => return list.pop().map(|(_, entry)| entry),
                Ok(_) => {}
            }
        }
        self.in_tree(|tree| tree.remove(rel))
    }

    /// Runs `change` on the tree, built from the list on the first call. (Handed in rather than
    /// returned, so no arm is left for a list that was just made a tree.)
    fn in_tree<R>(&mut self, change: impl FnOnce(&mut BTreeMap<String, IndexEntry>) -> R) -> R {
        let mut tree = match std::mem::take(&mut self.store) {
            Store::Sorted(list) => list.into_iter().collect(),
            Store::Tree(tree) => tree,
        };
        let out = change(&mut tree);
        self.store = Store::Tree(tree);
        out
    }

    /// Every rel and its entry, in key order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(match &self.store {
            Store::Sorted(list) => IterStore::Sorted(list.iter()),
            Store::Tree(tree) => IterStore::Tree(tree.iter()),
        })
    }

    /// Every rel and its entry to change in place, in key order.
    pub fn iter_mut(&mut self) -> IterMut<'_> {
        IterMut(match &mut self.store {
            Store::Sorted(list) => IterMutStore::Sorted(list.iter_mut()),
            Store::Tree(tree) => IterMutStore::Tree(tree.iter_mut()),
        })
    }

    /// Every rel, in key order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator + Clone {
        self.iter().map(|(rel, _)| rel)
    }

    /// Every entry, in key order of their rels.
    pub fn values(
        &self,
    ) -> impl DoubleEndedIterator<Item = &IndexEntry> + ExactSizeIterator + Clone {
        self.iter().map(|(_, entry)| entry)
    }
}

impl PartialEq for Entries {
    fn eq(&self, other: &Entries) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl fmt::Debug for Entries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// A map's entries, as a list (in the map's order already).
impl From<BTreeMap<String, IndexEntry>> for Entries {
    fn from(tree: BTreeMap<String, IndexEntry>) -> Entries {
        Entries::from_sorted_unique(tree.into_iter().collect())
    }
}

/// As a map collects: in key order, the last of a repeated rel kept.
impl FromIterator<(String, IndexEntry)> for Entries {
    fn from_iter<I: IntoIterator<Item = (String, IndexEntry)>>(iter: I) -> Entries {
        let mut list: Vec<(String, IndexEntry)> = iter.into_iter().collect();
        // Stable, so equal rels stay in the order given; each later one's entry then moves into
        // the first one's place before the later one is dropped, leaving the last given.
        list.sort_by(|a, b| a.0.cmp(&b.0));
        list.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                std::mem::swap(&mut later.1, &mut earlier.1);
            }
            same
        });
        Entries::from_sorted_unique(list)
    }
}

impl<'a> IntoIterator for &'a Entries {
    type Item = (&'a String, &'a IndexEntry);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// The iterator of [`Entries::iter`].
#[derive(Clone)]
pub struct Iter<'a>(IterStore<'a>);

#[derive(Clone)]
enum IterStore<'a> {
    Sorted(std::slice::Iter<'a, (String, IndexEntry)>),
    Tree(btree_map::Iter<'a, String, IndexEntry>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a String, &'a IndexEntry);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterStore::Sorted(list) => list.next().map(|(rel, entry)| (rel, entry)),
            IterStore::Tree(tree) => tree.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            IterStore::Sorted(list) => list.size_hint(),
            IterStore::Tree(tree) => tree.size_hint(),
        }
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterStore::Sorted(list) => list.next_back().map(|(rel, entry)| (rel, entry)),
            IterStore::Tree(tree) => tree.next_back(),
        }
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// The iterator of [`Entries::iter_mut`].
pub struct IterMut<'a>(IterMutStore<'a>);

enum IterMutStore<'a> {
    Sorted(std::slice::IterMut<'a, (String, IndexEntry)>),
    Tree(btree_map::IterMut<'a, String, IndexEntry>),
}

impl<'a> Iterator for IterMut<'a> {
    type Item = (&'a String, &'a mut IndexEntry);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterMutStore::Sorted(list) => list.next().map(|(rel, entry)| (&*rel, entry)),
            IterMutStore::Tree(tree) => tree.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            IterMutStore::Sorted(list) => list.size_hint(),
            IterMutStore::Tree(tree) => tree.size_hint(),
        }
    }
}

impl ExactSizeIterator for IterMut<'_> {}

/// Every rel and its entry, in key order, taken.
impl IntoIterator for Entries {
    type Item = (String, IndexEntry);
    type IntoIter = IntoIter;

    fn into_iter(self) -> IntoIter {
        IntoIter(match self.store {
            Store::Sorted(list) => IntoIterStore::Sorted(list.into_iter()),
            Store::Tree(tree) => IntoIterStore::Tree(tree.into_iter()),
        })
    }
}

/// The iterator of [`Entries`]' `into_iter`.
pub struct IntoIter(IntoIterStore);

enum IntoIterStore {
    Sorted(std::vec::IntoIter<(String, IndexEntry)>),
    Tree(btree_map::IntoIter<String, IndexEntry>),
}

impl Iterator for IntoIter {
    type Item = (String, IndexEntry);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IntoIterStore::Sorted(list) => list.next(),
            IntoIterStore::Tree(tree) => tree.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            IntoIterStore::Sorted(list) => list.size_hint(),
            IntoIterStore::Tree(tree) => tree.size_hint(),
        }
    }
}

impl ExactSizeIterator for IntoIter {}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(size: u64) -> IndexEntry {
        IndexEntry {
            size,
            ..IndexEntry::default()
        }
    }

    fn list(rels: &[&str]) -> Entries {
        rels.iter()
            .enumerate()
            .map(|(i, rel)| (rel.to_string(), entry(i as u64)))
            .collect()
    }

    fn is_list(entries: &Entries) -> bool {
        matches!(entries.store, Store::Sorted(_))
    }

    #[test]
    fn reads_and_changes_in_place_keep_the_list() {
        let mut entries = list(&["a", "b/c", "d"]);
        assert!(is_list(&entries));
        assert_eq!(entries.get("b/c"), Some(&entry(1)));
        assert_eq!(entries.get("b"), None);
        if let Some(e) = entries.get_mut("d") {
            e.size = 9;
        }
        for (_, e) in entries.iter_mut() {
            e.size += 1;
        }
        assert_eq!(entries.insert("a".into(), entry(7)), Some(entry(1)));
        // After the last rel, and the last removed: still in order without a tree.
        assert_eq!(entries.insert("e".into(), entry(5)), None);
        assert_eq!(entries.remove("e"), Some(entry(5)));
        assert_eq!(entries.remove("absent"), None);
        assert!(is_list(&entries));
        let sizes: Vec<u64> = entries.values().map(|e| e.size).collect();
        assert_eq!(sizes, [7, 2, 10]);
    }

    #[test]
    fn a_change_of_shape_inside_makes_a_tree_with_the_same_entries() {
        let mut entries = list(&["a", "c"]);
        assert_eq!(entries.insert("b".into(), entry(9)), None);
        assert!(!is_list(&entries));
        let rels: Vec<&String> = entries.keys().collect();
        assert_eq!(rels, ["a", "b", "c"]);
        assert_eq!(entries, list(&["a", "b", "c"]).tap_sizes(&[0, 9, 1]));

        let mut entries = list(&["a", "b", "c"]);
        assert_eq!(entries.remove("a"), Some(entry(0)));
        assert!(!is_list(&entries));
        assert_eq!(entries.len(), 2);
        assert_eq!(entries.get("a"), None);
    }

    #[test]
    fn collecting_keeps_the_last_of_a_repeated_rel_as_a_map_does() {
        let given = [("b", 1), ("a", 2), ("b", 3), ("a", 4), ("b", 5)];
        let entries: Entries = given
            .iter()
            .map(|(r, s)| (r.to_string(), entry(*s)))
            .collect();
        let map: BTreeMap<String, IndexEntry> = given
            .iter()
            .map(|(r, s)| (r.to_string(), entry(*s)))
            .collect();
        assert_eq!(entries, Entries::from(map));
        assert_eq!(entries.get("a"), Some(&entry(4)));
        assert_eq!(entries.get("b"), Some(&entry(5)));
        assert!(is_list(&entries));
    }

    impl Entries {
        /// These entries with their sizes replaced, in key order.
        fn tap_sizes(mut self, sizes: &[u64]) -> Entries {
            for ((_, e), size) in self.iter_mut().zip(sizes) {
                e.size = *size;
            }
            self
        }
    }
}
