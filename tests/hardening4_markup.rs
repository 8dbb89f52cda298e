//! Pages that cannot carry markup (issue 58, family 1): every text a spec or a scorecard
//! supplies reaches the HTML pages and the SVG plots as text. A spec and a scorecard
//! full of payloads — every LaTeX command the converter knows (read from its own tables:
//! pulldown-latex's `handle_primitive` and the macros of `report/html/math.rs`) with a
//! `<script>` and an `<img onerror>` argument, unclosed `$$` spans, quotes that break
//! attributes, `javascript:` links, `]]>`, form feeds — in the title, statement, labels,
//! source, discussion, a variant's description and findings, a prediction's note and
//! tolerance reason, the scorecard's paper, titles, quote, key meaning and not-checkable
//! reason, and a `scorecard-*.md` of the output directory: `dpclaims run` writes no
//! `<script`, no `on*` attribute and no `javascript:` URL into any page, every SVG (the
//! files and those inline in the scorecard pages) parses as XML, every formula that
//! became MathML parses as XML, and nothing outside the output directory changes.
use super::hardening3_util::{digest, run};
use scraper::Html;
use std::path::Path;

/// The payloads: markup, handlers, links, attribute breakers, a CDATA end, a form feed.
const PAYLOADS: &[&str] = &[
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "[j](javascript:alert(3))",
    "<a href=\"javascript:alert(4)\">a</a>",
    "\" onmouseover=\"alert(5)",
    "' onfocus='alert(6)",
    "]]>",
    "\u{c}",
    "<svg onload=alert(7)>",
    "<math><mi xlink:href=\"javascript:alert(8)\">x</mi></math>",
];

/// Every command the converter knows: the names its parser matches in
/// `handle_primitive` (pulldown-latex's `src/parser/primitives.rs`, the version of
/// `Cargo.lock` in Cargo's registry sources; offline), and the papers' macros of
/// `report/html/math.rs` (`MACROS`).
fn converter_commands() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap();
    let version = lock
        .split("[[package]]")
        .find(|p| p.contains("name = \"pulldown-latex\"\n"))
        .and_then(|p| p.split("version = \"").nth(1))
        .and_then(|v| v.split('"').next())
        .expect("pulldown-latex in Cargo.lock");
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(&std::env::var_os("HOME").unwrap()).join(".cargo"));
    let table = std::fs::read_dir(home.join("registry/src"))
        .expect("Cargo's registry sources")
        .map(|e| {
            e.unwrap()
                .path()
                .join(format!("pulldown-latex-{version}/src/parser/primitives.rs"))
        })
        .find(|p| p.is_file())
        .expect("pulldown-latex's sources in the registry");
    let src = std::fs::read_to_string(&table).unwrap_or_else(|e| panic!("{table:?}: {e}"));
    // A match arm's pattern: `"name" |` or `"name" =>`, the name ASCII letters.
    let mut names = quoted_before(&src, &["|", "=>"]);
    let ours = std::fs::read_to_string(root.join("src/report/html/math.rs")).unwrap();
    let macros = ours
        .lines()
        .find(|l| l.starts_with("const MACROS"))
        .expect("the MACROS table");
    let ours = quoted_before(macros, &[","]);
    assert!(ours.contains(&"N".to_string()) && ours.contains(&"E".to_string()));
    names.extend(ours);
    names.sort();
    names.dedup();
    for known in [
        "operatorname",
        "frac",
        "text",
        "mathcal",
        "left",
        "sqrt",
        "color",
    ] {
        assert!(
            names.iter().any(|n| n == known),
            "{known} not found in {table:?}"
        );
    }
    assert!(names.len() > 500, "only {} commands read", names.len());
    names
}

/// The string literals of `src` made of ASCII letters and followed (after spaces) by one
/// of `next`.
fn quoted_before(src: &str, next: &[&str]) -> Vec<String> {
    let b = src.as_bytes();
    let mut out = vec![];
    for (i, _) in src.match_indices('"') {
        let len = b[i + 1..]
            .iter()
            .take_while(|c| c.is_ascii_alphabetic())
            .count();
        let end = i + 1 + len;
        if len > 0
            && b.get(end) == Some(&b'"')
            && next
                .iter()
                .any(|n| src[end + 1..].trim_start().starts_with(n))
        {
            out.push(src[i + 1..end].to_string());
        }
    }
    out
}

/// A YAML scalar holding `s` exactly (a JSON string is a YAML double-quoted scalar).
fn y(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// Every payload, one after the other.
fn all_payloads() -> String {
    PAYLOADS.join(" ")
}

/// The formulas of the discussion: each command with each markup payload and each
/// quote as its argument, unclosed spans, a formula that must stay MathML.
fn formulas(commands: &[String]) -> Vec<String> {
    let mut f = vec![];
    for c in commands {
        for arg in [
            PAYLOADS[0],
            PAYLOADS[1],
            "\"x\"",
            "'x'",
            "x</mi><script>alert(9)</script><mi>",
        ] {
            f.push(format!("$$\\{c}{{{arg}}}$$"));
        }
    }
    f.extend(
        [
            r"$$\frac{1}{",
            r"$$\operatorname{<script>alert(10)</script>",
            r#""$$\text{x" <script>alert(11)</script>"#,
            "$$ $$ $$",
            r"$$\operatorname{]]>}$$",
            "$$x\u{c}y$$",
            // A formula that converts: `<` stays the operator, escaped.
            r"$$a < b$$",
        ]
        .map(String::from),
    );
    f
}

/// The claim: payloads in every prose field; its discussion holds [`formulas`].
fn claim(commands: &[String]) -> String {
    let pay = all_payloads();
    let header = format!(
        "\nid: hostile-markup\npaper: hostile-paper\ntitle: {}\n\
         source: {{paper: {}, section: {}, equation: {}}}\nstatement: {}\n\
         labels: {{n: {}, noise_term: {}}}\ndiscussion: {}\n",
        y(&format!(
            "title {pay} $$\\operatorname{{<script>alert(12)</script>}}$$"
        )),
        y(&format!("paper {pay}")),
        y(&format!("section {pay}")),
        y(&format!("eq {pay}")),
        y(&format!(
            "statement {pay} $$\\operatorname{{<img src=x onerror=alert(13)>}}$$"
        )),
        y(&format!("n {pay}")),
        y(&format!("noise {pay}")),
        y(&formulas(commands).join("\n\n")),
    );
    let text = crate::util::tiny_rf_claim(&header);
    let with_variant = text.replacen(
        "  - name: prop22\n",
        &format!(
            "  - name: prop22\n    description: {}\n    findings: {{vs-n: {}}}\n",
            y(&format!("desc {pay}")),
            y(&format!(
                "finding {pay} $$\\operatorname{{<script>alert(14)</script>}}$$"
            ))
        ),
        1,
    );
    let with_note = with_variant.replacen(
        "    tolerance_reason: \"test only\"\n",
        &format!(
            "    tolerance_reason: {}\n    note: {}\n",
            y(&format!("reason {pay}")),
            y(&format!("note {pay}"))
        ),
        1,
    );
    assert!(with_note.contains("findings:") && with_note.contains("note:"));
    with_note
}

/// The scorecard of the claim's paper: payloads in its paper, titles, quote, key number
/// (a small multiple inline in its page) and not-checkable reason.
fn scorecard() -> String {
    let pay = all_payloads();
    format!(
        r#"
paper: {}
results:
  - result: "Eq. 20"
    title: {}
    quote: {{text: {}, where: {}}}
    key: {{from: {{claim: hostile-markup, prediction: finite, variant: prop22}}, value: estimate, meaning: {}}}
    could_fail: data
    checked_by:
      - {{claim: hostile-markup, prediction: finite, variant: prop22}}
  - result: "Table 1"
    title: {}
    not_checkable: {}
"#,
        y(&format!("A paper {pay}")),
        y(&format!("title {pay}")),
        y(&format!("quote {pay}")),
        y(&format!("where {pay}")),
        y(&format!("meaning {pay} {{v}}")),
        y(&format!("t2 {pay}")),
        y(&format!("nc {pay}")),
    )
}

/// Whether an attribute value is a `javascript:` URL as a browser reads it (case,
/// leading and embedded whitespace and control characters ignored).
fn javascript_url(v: &str) -> bool {
    let v: String = v
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_control())
        .collect::<String>()
        .to_ascii_lowercase();
    v.starts_with("javascript:") || v.starts_with("vbscript:") || v.starts_with("data:text/html")
}

/// A page's problems: a `<script` anywhere in its bytes; parsed as a browser would, a
/// `script` element, an `on*` attribute or a `javascript:` URL on any element.
fn page_problems(name: &str, text: &str) -> Vec<String> {
    let mut bad = vec![];
    if text.to_ascii_lowercase().contains("<script") {
        bad.push(format!("{name}: `<script` in the page"));
    }
    let doc = Html::parse_document(text);
    for node in doc.tree.nodes() {
        let Some(el) = node.value().as_element() else {
            continue;
        };
        let tag = el.name();
        if tag.eq_ignore_ascii_case("script") {
            bad.push(format!("{name}: a <script> element"));
        }
        for (attr, value) in el.attrs() {
            if attr.to_ascii_lowercase().starts_with("on") {
                bad.push(format!("{name}: <{tag} {attr}={value:?}>"));
            }
            if javascript_url(value) {
                bad.push(format!("{name}: <{tag} {attr}={value:?}> is a script URL"));
            }
        }
    }
    bad
}

/// Each `open … close` fragment of `text` (outermost only).
fn fragments<'a>(text: &'a str, open: &str, close: &str) -> Vec<&'a str> {
    let mut out = vec![];
    let mut rest = text;
    while let Some(i) = rest.find(open) {
        let Some(j) = rest[i..].find(close) else {
            out.push(&rest[i..]);
            break;
        };
        out.push(&rest[i..i + j + close.len()]);
        rest = &rest[i + j + close.len()..];
    }
    out
}

#[test]
fn spec_and_scorecard_text_never_becomes_markup_and_every_svg_parses_as_xml() {
    let commands = converter_commands();
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    for (sub, file, text) in [
        ("claims", "hostile-markup.yaml", claim(&commands)),
        ("scorecards", "hostile-paper.yaml", scorecard()),
        (
            "out",
            "scorecard-extra.md",
            format!(
                "# Extra {}\n\n$$\\operatorname{{<script>alert(15)</script>}}$$ [x](javascript:alert(16)) {}\n",
                all_payloads(),
                all_payloads()
            ),
        ),
    ] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        std::fs::write(dir.join(sub).join(file), text).unwrap();
    }
    let before = digest(dir, &["out"]);
    let o = run(dir, &["run", "--no-baseline", "--out", "out"]);
    // 0, or 1 when the tiny claim's control is not caught: the pages are written either way.
    assert!(matches!(o.code, Some(0 | 1)), "{:?}: {}", o.code, o.stderr);
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
    assert_eq!(
        digest(dir, &["out"]),
        before,
        "a file outside --out changed"
    );

    let out = dir.join("out");
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for expected in [
        "index.html",
        "hostile-markup.html",
        "hostile-markup.svg",
        "scorecard-hostile-paper.html",
        "scorecard-extra.html",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "no {expected}: {names:?}"
        );
    }
    let mut bad = vec![];
    let (mut svgs, mut maths) = (0, 0);
    for name in &names {
        let path = out.join(name);
        if name.ends_with(".html") {
            let text = std::fs::read_to_string(&path).unwrap();
            bad.extend(page_problems(name, &text));
            // Inline plots and formulas are XML too.
            for svg in fragments(&text, "<svg", "</svg>") {
                svgs += 1;
                if let Err(e) = roxmltree::Document::parse(svg) {
                    bad.push(format!("{name}: an inline SVG is not XML: {e}"));
                }
            }
            for math in fragments(&text, "<math", "</math>") {
                maths += 1;
                if let Err(e) = roxmltree::Document::parse(math) {
                    bad.push(format!("{name}: a formula is not XML: {e}: {math}"));
                }
            }
        } else if name.ends_with(".svg") {
            svgs += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            if let Err(e) = roxmltree::Document::parse(&text) {
                bad.push(format!("{name}: not XML: {e}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(
        svgs >= 2,
        "only {svgs} SVGs (the claim's file, the scorecard's key plot)"
    );

    // The payloads are shown, as text; formulas the converter reads are still MathML.
    let page = std::fs::read_to_string(out.join("hostile-markup.html")).unwrap();
    for shown in [
        "&lt;script&gt;alert(1)&lt;/script&gt;",
        "&lt;img src=x onerror=alert(2)&gt;",
        r"<code>\operatorname{&lt;script&gt;alert(12)&lt;/script&gt;}</code>",
        "<mo>&lt;</mo>",
    ] {
        assert!(page.contains(shown), "the claim page lacks {shown}");
    }
    assert!(maths > 1000, "only {maths} formulas became MathML");
    // The form feed of the labels is U+FFFD in the plot, the labels' text kept.
    let svg = std::fs::read_to_string(out.join("hostile-markup.svg")).unwrap();
    assert!(
        svg.contains("n &lt;script&gt;") && svg.contains('\u{FFFD}'),
        "{svg}"
    );
    assert!(!svg.contains('\u{c}'));
}

/// The same through the Markdown renderer every page uses (the library's entry point),
/// one formula at a time: each command with each payload gives no script, no handler,
/// and MathML that parses as XML, or code.
#[test]
fn every_converter_command_with_every_payload_renders_to_inert_html() {
    let commands = converter_commands();
    let mut bad = vec![];
    let mut as_math = 0;
    for f in formulas(&commands) {
        for text in [f.clone(), format!("\"{f}\" and more")] {
            let h = dpclaims::report::html::render_markdown(&text);
            bad.extend(page_problems(&text, &h));
            for math in fragments(&h, "<math", "</math>") {
                as_math += 1;
                if let Err(e) = roxmltree::Document::parse(math) {
                    bad.push(format!("{text}: not XML: {e}: {math}"));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(as_math > 1000, "only {as_math} formulas became MathML");
}
