//! [`printable`]: text from the bucket (a lock's holder, a key) made safe to show a person.
//!
//! Control characters, DEL, C1 controls and the bidirectional embeddings, overrides and
//! isolates are escaped as `\u{1b}`, so a hostile string can neither drive a terminal (`\e[2J`
//! clears it) nor forge a line of output (a newline) or reorder what is shown. Everything else
//! is kept as is.

/// Whether `c` could drive a terminal or forge or reorder output.
fn unprintable(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every character that could drive a terminal or forge output escaped.
pub fn printable(text: &str) -> String {
    printable_keeping(text, false)
}

/// [`printable`], keeping `\n` when `keep_newlines` (a message of several lines of our own).
pub fn printable_keeping(text: &str, keep_newlines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if unprintable(c) && !(keep_newlines && c == '\n') {
            out.push_str(&format!("\\u{{{:02x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn escapes_what_drives_a_terminal_and_keeps_the_rest() {
        assert_eq!(printable("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(printable("x\ny"), "x\\u{0a}y");
        assert_eq!(
            printable("\u{7f}\u{85}\u{202e}\u{2069}"),
            "\\u{7f}\\u{85}\\u{202e}\\u{2069}"
        );
        assert_eq!(printable("dörte@host ✓"), "dörte@host ✓");
        assert_eq!(super::printable_keeping("x\ny\r", true), "x\ny\\u{0d}");
    }
}
