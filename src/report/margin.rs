//! The meaning of an inequality's margin, written once per page (issue 49, item 5):
//! a row says "closest point's mean margin m (interval [lo, hi])" and the page says once,
//! above its table, which sign violates. A row that stands alone (a CI annotation, a JUnit
//! case) keeps the words in the row ([`super::result_line`]).

/// The sentence every page with a margin carries once.
pub const NOTE: &str = "A margin is the measured side minus the bound (the bound minus the measured side for a lower bound): above 0 violates.";

/// What a row says of its margin's sign, dropped from the rows of a page that has [`NOTE`].
const IN_ROW: &str = "; > 0 violates)";

/// A row's text ([`super::result_line`]) for a page that carries [`NOTE`].
pub fn cell(line: String) -> String {
    match line.find(IN_ROW) {
        Some(_) => line.replace(IN_ROW, ")"),
        None => line,
    }
}

/// Whether a row's text reports a margin (its page then carries [`NOTE`]).
pub fn says(line: &str) -> bool {
    line.contains(IN_ROW)
}

/// A Markdown table whose rows may say their margin's sign: the rows without it and
/// [`NOTE`] once above them (the table unchanged when no row says it).
pub fn once_above(table: &str) -> String {
    if table.contains(IN_ROW) {
        format!("*{NOTE}*\n\n{}", table.replace(IN_ROW, ")"))
    } else {
        table.to_string()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_note_goes_once_above_a_table_whose_rows_said_it() {
        let t = "| a | margin 1 (interval [0, 2]; > 0 violates) |\n| b | margin 2 (interval [1, 3]; > 0 violates) |\n";
        let once = super::once_above(t);
        assert_eq!(once.matches("0 violates").count(), 1, "{once}");
        assert!(once.starts_with(&format!("*{}*", super::NOTE)));
        assert!(once.contains("(interval [0, 2])"));
        assert_eq!(super::once_above("| a | b |\n"), "| a | b |\n");
    }
}
