//! The converter's MathML, read back by a real HTML tokenizer (`html5ever`, the one a
//! browser's parser follows) and written out again from an allow-list: MathML
//! presentation elements only, a fixed set of their attributes, every text and every
//! attribute value escaped. Anything else — an element outside the list (`script`,
//! `img`, `annotation-xml`, an HTML element), an attribute outside it (`on*`, `href`,
//! `src`), a `style` that is not the converter's own colours and lengths, a comment, a
//! doctype, a NUL, unbalanced tags, text outside the `<math>` element — makes the
//! whole formula `None`, and the page shows its source as code.
//!
//! Why: `pulldown-latex` escapes the text of `\text{…}` but writes identifiers,
//! operators and `\operatorname{…}` as they were typed, so
//! `$$\operatorname{<script>…</script>}$$` in a spec was a script on the page. The
//! converter's output is not trusted to be markup at all: it is parsed as a browser
//! would parse it, and only what the list names is written back.
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use std::cell::RefCell;

/// The MathML Core elements a formula may hold (what the converter writes, and the
/// presentation elements beside them). Not `annotation-xml` (an HTML integration point:
/// it can hold HTML), not `maction` or `mglyph` (actions, remote images).
pub(super) const ELEMENTS: &[&str] = &[
    "math",
    "annotation",
    "semantics",
    "merror",
    "mfrac",
    "mi",
    "mmultiscripts",
    "mn",
    "mo",
    "mover",
    "mpadded",
    "mphantom",
    "mprescripts",
    "mroot",
    "mrow",
    "ms",
    "mspace",
    "msqrt",
    "mstyle",
    "msub",
    "msubsup",
    "msup",
    "mtable",
    "mtd",
    "mtext",
    "mtr",
    "munder",
    "munderover",
    "none",
];

/// The attributes a formula's element may carry: MathML's layout attributes, no URL
/// (`href`, `src`, `xlink:href`), no event handler. `class` and `style` are checked
/// further ([`class_ok`], [`style_ok`]); `xmlns` must be MathML's namespace.
pub(super) const ATTRIBUTES: &[&str] = &[
    "accent",
    "accentunder",
    "class",
    "columnalign",
    "columnspan",
    "depth",
    "dir",
    "display",
    "displaystyle",
    "encoding",
    "fence",
    "form",
    "height",
    "largeop",
    "linethickness",
    "lspace",
    "mathbackground",
    "mathcolor",
    "mathsize",
    "mathvariant",
    "maxsize",
    "minsize",
    "movablelimits",
    "rowalign",
    "rowspan",
    "rspace",
    "scriptlevel",
    "separator",
    "stretchy",
    "style",
    "symmetric",
    "voffset",
    "width",
    "xmlns",
];

/// MathML's namespace, the only value `xmlns` may have.
const MATHML_NS: &str = "http://www.w3.org/1998/Math/MathML";

/// The CSS properties the converter writes into `style` (colours, borders, the margin
/// of a negative space, the height of a row gap).
const STYLE_PROPERTIES: &[&str] = &[
    "color",
    "background-color",
    "border",
    "border-color",
    "margin-left",
    "height",
];

/// A class list of the converter's kind (`menv-align cell-left`): letters, digits, `-`
/// and spaces.
fn class_ok(v: &str) -> bool {
    v.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ' ')
}

/// A `style` of the converter's kind: `property: value` declarations separated by `;`,
/// each property in [`STYLE_PROPERTIES`], each value made of lengths, `#hex` colours,
/// keywords and `rgb(…)` — no `url(`, no escape, no comment, no other function.
fn style_ok(v: &str) -> bool {
    v.split(';')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .all(|d| {
            let Some((prop, value)) = d.split_once(':') else {
                return false;
            };
            let value = value.trim();
            STYLE_PROPERTIES.contains(&prop.trim())
            && value.chars().all(|c| {
                c.is_ascii_alphanumeric() || matches!(c, ' ' | '.' | '#' | '%' | '-' | '(' | ')')
            })
            // Every `(` opens `rgb(`.
            && value.match_indices('(').all(|(i, _)| value[..i].ends_with("rgb"))
        })
}

/// Whether an attribute (name, value) passes.
fn attribute_ok(name: &str, value: &str) -> bool {
    ATTRIBUTES.contains(&name)
        && match name {
            "class" => class_ok(value),
            "style" => style_ok(value),
            "xmlns" => value == MATHML_NS,
            _ => true,
        }
}

/// Text for an HTML page: `&`, `<`, `>` escaped (and, in an attribute value, `"` and
/// `'`); control characters other than tab, newline and carriage return replaced by
/// U+FFFD.
fn escape_into(out: &mut String, s: &str, attribute: bool) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\'' if attribute => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

/// The tokens of the converter's output, written back as they pass.
#[derive(Default)]
struct Writer {
    out: String,
    /// The open elements, innermost last.
    open: Vec<String>,
    /// Whether the `<math>` element has been opened and closed.
    closed: bool,
    /// The first reason the formula was refused.
    refused: Option<String>,
}

impl Writer {
    fn refuse(&mut self, why: String) {
        self.refused.get_or_insert(why);
    }

    fn token(&mut self, token: Token) {
        if self.refused.is_some() {
            return;
        }
        match token {
            Token::TagToken(tag) => {
                let name: &str = &tag.name;
                if !ELEMENTS.contains(&name) {
                    return self.refuse(format!("element <{name}>"));
                }
                if self.closed || (self.open.is_empty() && name != "math") {
                    return self.refuse(format!("<{name}> outside the <math> element"));
                }
                match tag.kind {
                    TagKind::StartTag => {
                        self.out.push('<');
                        self.out.push_str(name);
                        for a in &tag.attrs {
                            let (an, av): (&str, &str) = (&a.name.local, &a.value);
                            if !a.name.ns.is_empty()
                                || a.name.prefix.is_some()
                                || !attribute_ok(an, av)
                            {
                                return self.refuse(format!("attribute {an}={av:?} on <{name}>"));
                            }
                            self.out.push(' ');
                            self.out.push_str(an);
                            self.out.push_str("=\"");
                            escape_into(&mut self.out, av, true);
                            self.out.push('"');
                        }
                        if tag.self_closing {
                            // As the converter writes `<mspace … />`: a MathML element
                            // (foreign content) closes itself in HTML as in XML.
                            self.out.push_str(" />");
                            self.closed |= self.open.is_empty();
                        } else {
                            self.out.push('>');
                            self.open.push(name.to_string());
                        }
                    }
                    TagKind::EndTag => {
                        if self.open.last().map(String::as_str) != Some(name) {
                            return self.refuse(format!("unbalanced </{name}>"));
                        }
                        self.open.pop();
                        self.out.push_str(&format!("</{name}>"));
                        self.closed |= self.open.is_empty();
                    }
                }
            }
            Token::CharacterTokens(t) => {
                if !self.open.is_empty() {
                    escape_into(&mut self.out, &t, false);
                } else if !t.trim().is_empty() {
                    self.refuse("text outside the <math> element".into());
                }
            }
            Token::CommentToken(_) => self.refuse("a comment".into()),
            Token::DoctypeToken(_) => self.refuse("a doctype".into()),
            Token::NullCharacterToken => self.refuse("a NUL character".into()),
            // A parse error alone is no reason: `<mo><</mo>` (the converter's `a < b`)
            // is one, and reads as the operator `<`.
            Token::ParseError(_) | Token::EOFToken => {}
        }
    }
}

/// The sink handed to the tokenizer (its interface takes `&self`).
struct Sink(RefCell<Writer>);

impl TokenSink for Sink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        self.0.borrow_mut().token(token);
        TokenSinkResult::Continue
    }
}

/// `html` (the converter's MathML) rewritten from the allow-list, or why it was refused.
pub(super) fn sanitise(html: &str) -> Result<String, String> {
    let tokenizer = Tokenizer::new(Sink(RefCell::default()), TokenizerOpts::default());
    let input = BufferQueue::default();
    input.push_back(StrTendril::from(html));
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    let w = tokenizer.sink.0.into_inner();
    if let Some(why) = w.refused {
        return Err(why);
    }
    if !w.closed || !w.open.is_empty() {
        return Err("no complete <math> element".into());
    }
    Ok(w.out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_converters_markup_passes_and_is_written_back_well_formed() {
        let m = r#"<math display="inline"><mrow><mi>a</mi><mo><</mo><mi>b</mi><mo>></mo><mspace width="1em" /><mtext>&lt;b&gt;</mtext></mrow></math>"#;
        assert_eq!(
            sanitise(m).unwrap(),
            r#"<math display="inline"><mrow><mi>a</mi><mo>&lt;</mo><mi>b</mi><mo>&gt;</mo><mspace width="1em" /><mtext>&lt;b&gt;</mtext></mrow></math>"#
        );
        let styled = r#"<math><mi style="color: rgb(255 0 0); border: 0.06em solid rgb(0 0 255)" class="menv-align cell-left">x</mi></math>"#;
        assert!(sanitise(styled).is_ok());
    }

    #[test]
    fn anything_outside_the_allow_list_refuses_the_formula() {
        for (m, why) in [
            (
                "<math><mi><script>alert(1)</script></mi></math>",
                "element <script>",
            ),
            (
                "<math><mi><img src=x onerror=alert(1)></mi></math>",
                "element <img>",
            ),
            (
                r#"<math><mi onclick="x">a</mi></math>"#,
                "attribute onclick",
            ),
            (
                r#"<math><mi href="javascript:x">a</mi></math>"#,
                "attribute href",
            ),
            (
                r#"<math><mi xlink:href="javascript:x">a</mi></math>"#,
                "attribute xlink:href",
            ),
            (
                r#"<math><annotation-xml><svg></svg></annotation-xml></math>"#,
                "element <annotation-xml>",
            ),
            (
                r#"<math><mi style="background: url(https://e/x)">a</mi></math>"#,
                "attribute style",
            ),
            (
                r#"<math><mi style="color: expression(alert(1))">a</mi></math>"#,
                "attribute style",
            ),
            (
                r#"<math><mi class="a&quot;b">a</mi></math>"#,
                "attribute class",
            ),
            (
                r#"<math xmlns="http://www.w3.org/1999/xhtml"></math>"#,
                "attribute xmlns",
            ),
            ("<math><mi>a<!-- x --></mi></math>", "a comment"),
            ("<math><mi>a</mo></mi></math>", "unbalanced </mo>"),
            ("<math><mi>a</mi>", "no complete <math>"),
            ("<mi>a</mi>", "<mi> outside"),
            ("x<math></math>", "text outside"),
            ("<math></math><mi>a</mi>", "<mi> outside"),
            ("<math><mi>\0</mi></math>", "a NUL"),
            ("<math><mi><![CDATA[<script>]]></mi></math>", "a comment"),
        ] {
            let e = sanitise(m).expect_err(m);
            assert!(e.contains(why), "{m}: {e}");
        }
    }

    #[test]
    fn entities_are_read_and_written_back_escaped() {
        assert_eq!(
            sanitise("<math><mi>&lt;script&gt;&amp;&quot;\u{c}</mi></math>").unwrap(),
            "<math><mi>&lt;script&gt;&amp;\"\u{FFFD}</mi></math>"
        );
    }
}
