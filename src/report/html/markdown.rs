//! Markdown (claim prose, discussions, `<id>.md` sections, scorecards) to HTML with
//! `pulldown-cmark`. Raw HTML in the source is shown as text, never passed through (the
//! texts are specs' prose, where `<u, mu>` means an inner product), and links to a
//! Markdown page `x.md` beside the reports point to its HTML page `x.html`.
use maud::PreEscaped;
use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag};

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH
}

/// `x.md` (a relative link with no directory) → `x.html`; any other link unchanged.
fn local_html(url: CowStr<'_>) -> CowStr<'_> {
    let relative = !url.contains(':') && !url.contains('/') && !url.starts_with('#');
    match url.strip_suffix(".md") {
        Some(stem) if relative && !stem.is_empty() => format!("{stem}.html").into(),
        _ => url,
    }
}

/// Renders Markdown to HTML.
pub(super) fn render(md: &str) -> String {
    let events = Parser::new_ext(md, options()).map(|e| match e {
        Event::Html(s) | Event::InlineHtml(s) => Event::Text(s),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: local_html(dest_url),
            title,
            id,
        }),
        e => e,
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    out
}

/// Markdown blocks (paragraphs, lists, tables, headings) as HTML.
pub(super) fn md_block(md: &str) -> PreEscaped<String> {
    PreEscaped(render(md))
}

/// One line of Markdown (emphasis, code) as inline HTML: without its `<p>` wrapper.
pub(super) fn md_inline(md: &str) -> PreEscaped<String> {
    let html = render(md);
    let trimmed = html.trim_end();
    let inner = trimmed
        .strip_prefix("<p>")
        .and_then(|s| s.strip_suffix("</p>"))
        .filter(|s| !s.contains("<p>"))
        .unwrap_or(trimmed);
    PreEscaped(inner.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_is_escaped_and_md_links_point_to_html_pages() {
        let h = render(
            "the overlap <u_1(G), mu>^2 and <script>x</script>, see [a](a.md), [b](https://e/b.md)",
        );
        assert!(
            !h.contains("<script>") && h.contains("&lt;script&gt;"),
            "{h}"
        );
        assert!(h.contains(r#"href="a.html""#), "{h}");
        assert!(h.contains(r#"href="https://e/b.md""#), "{h}");
        assert_eq!(
            md_inline("**holds** — caught").0,
            "<strong>holds</strong> — caught"
        );
    }
}
