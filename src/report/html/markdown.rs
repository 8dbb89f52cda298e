//! Markdown (claim prose, discussions, `<id>.md` sections, scorecards) to HTML with
//! `pulldown-cmark`. Raw HTML in the source is shown as text, never passed through (the
//! texts are specs' prose, where `<u, mu>` means an inner product), and links to a
//! Markdown page `x.md` beside the reports point to its HTML page `x.html`.
//!
//! The pages are static and self-contained: a link is kept only when it is http(s), a
//! fragment, or relative inside the report set (no scheme, no leading '/', no `..`);
//! any other (`javascript:`, `data:`, `file:`, `//host`) is shown as its text alone. An
//! image is kept only when it is relative inside the report set (no remote image is
//! fetched by a reader's browser); another shows its alt text.
//!
//! Math: the specs quote the papers' formulas between `$$` delimiters (the only delimiter
//! they use; a quote may leave the last `$$` open, as the paper's sentence runs on). Each
//! `$$…$$` span becomes MathML ([`super::math`], written back from an allow-list by
//! [`super::sanitise`]), which browsers render natively without JavaScript; a span the
//! converter cannot read or the allow-list refuses, and any backslash command outside a
//! span, is shown as code, never as raw source in prose. The Markdown pages keep the
//! LaTeX source as written (plain text, readable as it is).
use super::math::mathml;
use maud::PreEscaped;
use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag, TagEnd, TextMergeStream};

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

/// A destination inside the report set: no scheme, not absolute, no `..` segment.
fn inside_report_set(url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or("");
    !path.contains(':')
        && !url.starts_with('/')
        && !url.starts_with('\\')
        && !path.split(['/', '\\']).any(|seg| seg == "..")
        && !url.chars().any(|c| c.is_control())
}

/// A link a static page may keep (module docs).
fn allowed_link(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    lower.starts_with("https://")
        || lower.starts_with("http://")
        || url.starts_with('#')
        || inside_report_set(url)
}

/// Renders Markdown to HTML.
pub(super) fn render(md: &str) -> String {
    // For each open link or image: whether its start was kept (its end must match).
    let mut open: Vec<bool> = Vec::new();
    let events = Parser::new_ext(md, options()).filter_map(|e| match e {
        Event::Html(s) | Event::InlineHtml(s) => Some(Event::Text(s)),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            let keep = allowed_link(&dest_url);
            open.push(keep);
            keep.then(|| {
                Event::Start(Tag::Link {
                    link_type,
                    dest_url: local_html(dest_url),
                    title,
                    id,
                })
            })
        }
        Event::Start(Tag::Image { ref dest_url, .. }) => {
            let keep = inside_report_set(dest_url);
            open.push(keep);
            keep.then_some(e)
        }
        Event::End(TagEnd::Link) | Event::End(TagEnd::Image) => {
            open.pop().unwrap_or(true).then_some(e)
        }
        e => Some(e),
    });
    // One text event per run of text (an escape such as `\\` splits a run in the parser),
    // so that a `$$…$$` span is seen whole.
    let events = TextMergeStream::new(events).flat_map(|e| match e {
        Event::Text(t) if has_latex(&t) => latex_spans(&t),
        e => vec![e],
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    out
}

/// Whether a text holds LaTeX: `$$`, or a backslash before a letter (`\frac`).
fn has_latex(t: &str) -> bool {
    t.contains("$$")
        || t.as_bytes()
            .windows(2)
            .any(|w| w[0] == b'\\' && w[1].is_ascii_alphabetic())
}

/// A text with its LaTeX rendered: each `$$...$$` span (an unclosed one runs to the
/// closing `"` of the quote it opens in, else to the end of the text) becomes MathML, or one code span when it cannot be converted; outside
/// the spans each whitespace-separated token with a backslash command becomes one code
/// span.
fn latex_spans(t: &str) -> Vec<Event<'static>> {
    let mut out: Vec<Event<'static>> = vec![];
    let plain = |s: &str, out: &mut Vec<Event<'static>>| {
        let mut buf = String::new();
        for tok in s.split_inclusive(char::is_whitespace) {
            if has_latex(tok) {
                if !buf.is_empty() {
                    out.push(Event::Text(std::mem::take(&mut buf).into()));
                }
                let core = tok.trim_end();
                out.push(Event::Code(core.to_string().into()));
                out.push(Event::Text(tok[core.len()..].to_string().into()));
            } else {
                buf.push_str(tok);
            }
        }
        if !buf.is_empty() {
            out.push(Event::Text(buf.into()));
        }
    };
    let mut rest = t;
    while let Some(i) = rest.find("$$") {
        plain(&rest[..i], &mut out);
        let after = &rest[i + 2..];
        let (tex, next) = match after.find("$$") {
            Some(j) => (after[..j].trim(), &after[j + 2..]),
            // Unclosed: the formula ends where the quote around it does (math has no
            // `"`), else at the end of the text.
            None => {
                let end = after.find('"').unwrap_or(after.len());
                (after[..end].trim(), &after[end..])
            }
        };
        out.push(match mathml(tex) {
            Some(m) => Event::InlineHtml(m.into()),
            None => Event::Code(tex.to_string().into()),
        });
        rest = next;
    }
    plain(rest, &mut out);
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
    fn latex_becomes_mathml_or_code_never_raw_source() {
        let h = render("the risk $$= O\\left(d^{-1}\\right)$$ and \\frac{a}{b} here");
        assert!(h.contains("<math"), "{h}");
        assert!(!h.contains("\\left"), "{h}");
        assert!(h.contains("<code>\\frac{a}{b}</code> here"), "{h}");
        assert!(!h.contains("$$"), "{h}");
        // As the Markdown pages write a quote: escapes split the parser's text, an
        // unclosed span runs to the end, the papers' \\N and \\E macros are known.
        let h = render(
            "\"$$\\mathcal{R} = \\E\\_x \\sigma\\_a \\N(0, 1) = O\\left(d\\right)\" (Th. 1)",
        );
        assert!(
            h.contains("<math") && !h.contains('\\') && !h.contains("$$"),
            "{h}"
        );
        assert!(h.contains("(Th. 1)") && h.contains("𝔼"), "{h}");
        // A span the converter cannot read is shown as code.
        let h = render("a $$\\frac{1}{$$ b $$\\nosuchcommand x$$ c");
        assert!(h.contains("<code>\\frac{1}{</code>"), "{h}");
        assert!(h.contains("<code>\\nosuchcommand x</code>"), "{h}");
    }

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

    #[test]
    fn hostile_links_and_remote_images_are_shown_as_text() {
        for md in [
            "[click](javascript:alert(1))",
            "[click](JavaScript:alert(1))",
            "[click]( javascript:alert(1))",
            "[click](data:text/html;base64,PHNjcmlwdD4=)",
            "[click](vbscript:x)",
            "[click](file:///etc/passwd)",
            "[click](//evil.example/x)",
            "[click](/etc/passwd)",
            "[click](../../outside.html)",
            "[click](a/../../x.md)",
            "<javascript:alert(1)>",
            "[click][r]\n\n[r]: javascript:alert(1)",
        ] {
            let h = render(md);
            assert!(!h.contains("href"), "{md}: {h}");
            assert!(!h.to_lowercase().contains("<a "), "{md}: {h}");
        }
        for md in [
            "![x](https://evil.example/p.png)",
            "![x](http://evil.example/p.png)",
            "![x](//evil.example/p.png)",
            "![x](data:image/png;base64,AAAA)",
            "![x](../p.png)",
        ] {
            let h = render(md);
            assert!(!h.contains("<img"), "{md}: {h}");
            assert!(h.contains('x'), "{md}: {h}");
        }
        // Kept: http(s), fragments, relative pages and plots of the set.
        let h = render("[a](https://e/x) [b](#sec) [c](c.md) ![p](p.svg) [**d**](http://e)");
        assert_eq!(h.matches("href").count(), 4, "{h}");
        assert!(
            h.contains(r#"href="c.html""#) && h.contains(r#"<img src="p.svg""#),
            "{h}"
        );
        // An image inside a dropped link, and a dropped link inside kept text.
        let h = render("[![x](https://e/p.png)](javascript:x) and [ok](https://e)");
        assert!(!h.contains("<img") && h.matches("href").count() == 1, "{h}");
    }
}
