//! The push diff's walk order: the index and the base joined key by key, and the local files
//! met in rel order, so the plan needs no look-ups.

use std::cmp::Ordering;

use crate::index::{Entries, IndexEntry};
use crate::model::layout::{PayloadFile, Survey};

/// A local payload file with the remote and base entries of its rel.
#[derive(Clone, Copy)]
pub(super) struct Local<'s, 'a> {
    pub(super) rel: &'s str,
    pub(super) file: &'s PayloadFile<'a>,
    pub(super) remote: Option<&'s IndexEntry>,
    pub(super) base: Option<&'s IndexEntry>,
}

/// The keys of two sorted maps in order, each with its entry in either map.
pub(super) fn joined<'m>(
    remote: &'m Entries,
    base: &'m Entries,
) -> impl Iterator<Item = (&'m String, Option<&'m IndexEntry>, Option<&'m IndexEntry>)> {
    let mut r = remote.iter().peekable();
    let mut b = base.iter().peekable();
    std::iter::from_fn(move || match (r.peek(), b.peek()) {
        (None, None) => None,
        (Some(_), None) => r.next().map(|(k, e)| (k, Some(e), None)),
        (None, Some(_)) => b.next().map(|(k, e)| (k, None, Some(e))),
        (Some((rk, _)), Some((bk, _))) => match rk.cmp(bk) {
            Ordering::Less => r.next().map(|(k, e)| (k, Some(e), None)),
            Ordering::Greater => b.next().map(|(k, e)| (k, None, Some(e))),
            Ordering::Equal => {
                let (k, e) = r.next()?;
                let (_, be) = b.next()?;
                Some((k, Some(e), Some(be)))
            }
        },
    })
}

/// Every payload file of `survey` in rel order: `locals` (the files the index or the base
/// names, in rel order, each marked in `met`) with the others (new here) merged in. A walk in
/// rel order already is that order: the files are taken as walked, each met one from `locals`
/// (the next there must be its own), with no string compared. Any other walk is sorted and
/// merged.
pub(super) fn in_rel_order<'s, 'a>(
    survey: &'s Survey<'a>,
    locals: Vec<Local<'s, 'a>>,
    met: &[bool],
) -> Vec<Local<'s, 'a>> {
    let new_here = |(rel, file): (&'a str, &'s PayloadFile<'a>)| Local {
        rel,
        file,
        remote: None,
        base: None,
    };
    if survey.payload.in_rel_order() {
        let mut out = Vec::with_capacity(survey.payload.len());
        let mut known = locals.iter().peekable();
        let mut taken = true;
        for (rel, file) in survey.payload.iter() {
            if !met[file.slot] {
                out.push(new_here((rel, file)));
            } else if let Some(local) = known.next_if(|l| l.file.slot == file.slot) {
                out.push(*local);
            } else {
                taken = false;
                break;
            }
        }
        if taken && known.next().is_none() {
            return out;
        }
    }
    let mut new_files: Vec<Local<'_, '_>> = survey
        .payload
        .iter()
        .filter(|(_, file)| !met[file.slot])
        .map(new_here)
        .collect();
    new_files.sort_unstable_by(|a, b| a.rel.cmp(b.rel));
    merge_sorted(locals, new_files)
}

/// Two lists sorted by rel (with no rel in both) as one sorted list.
pub(super) fn merge_sorted<'s, 'a>(
    left: Vec<Local<'s, 'a>>,
    right: Vec<Local<'s, 'a>>,
) -> Vec<Local<'s, 'a>> {
    if right.is_empty() {
        return left;
    }
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut l = left.into_iter().peekable();
    let mut r = right.into_iter().peekable();
    loop {
        let take_left = match (l.peek(), r.peek()) {
            (Some(a), Some(b)) => a.rel < b.rel,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let next = if take_left { l.next() } else { r.next() };
        out.extend(next);
    }
    out
}
