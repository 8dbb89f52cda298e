//! Every HTML page of a run, as a reader sees it: no raw LaTeX outside code (the papers'
//! `$$…$$` formulas are MathML), on a tiny claim and scorecard whose statement and quotes
//! use the delimiters and macros of the committed specs (`$$…$$`, a `$$` left open by a
//! quote that runs on, the blog's `\N` and `\E`).
use scraper::{ElementRef, Html, Node};
use std::collections::BTreeMap;
use std::path::Path;

fn claim() -> String {
    crate::util::tiny_rf_claim_named("tiny-pg")
        .replace("id: tiny-pg", "id: tiny-pg\npaper: tiny-paper")
        .replace(
            r#"statement: "noise term along n""#,
            r#"statement: 'noise term along n, with $$\sigma_a = \sqrt{\eta_a T} \frac{\sqrt{8\log(1/\delta)}}{\varepsilon}$$ and noise $$\sqrt{\eta_a} \frac{C_a}{n} \sigma_a \N(0, 1)$$'"#,
        )
}

/// A discussion with the project's internal pointers (an issue number) that a page must
/// not show.
const DISCUSSION: &str = "\ndiscussion: |\n  What this claim judges now (issue 31). Tuning grids (issue 46, item 2): none.\n";

const CARD: &str = r#"
paper: "A tiny paper"
results:
  - result: "Eq. 20"
    title: "the noise term falls as n^-2"
    quote: {text: '$$\mathcal{R}(f_{\text{NN}}) = \E_x[(f_{\text{NN}}(x) - f_*(x))^2] = O\left(d^{-\frac{\varepsilon_p}{8q}} + \frac{d^{1 + \varepsilon_n}}{n} \frac{\log(1.25/\delta)}{\varepsilon^2}\right) = o(1)', where: "Eq. 20"}
    could_fail: data
    checked_by:
      - {claim: tiny-pg, prediction: vs-n, variant: prop22}
      - {claim: tiny-pg, prediction: finite, variant: prop22}
  - result: "Assumption 3"
    title: "privacy budget"
    quote: {text: 'There exist $$\varepsilon_n, \varepsilon_p > 0$$ with $$\delta \in (0, 1), \quad \varepsilon \in \left(0, 8 \log(1/\delta)\right)$$', where: "Assumption 3"}
    not_checkable: "a range, not a result"
"#;

/// Runs the tiny claim and scorecard into a temporary `out/`; returns the directory and
/// every HTML page, name -> text.
fn run() -> (tempfile::TempDir, BTreeMap<String, String>) {
    let dir = crate::util::run_tiny_project(vec![
        ("claims", "tiny-pg.yaml", claim() + DISCUSSION),
        ("scorecards", "tiny-paper.yaml", CARD.to_string()),
    ]);
    let pages = html_pages(&dir.path().join("out"));
    (dir, pages)
}

/// Every `*.html` of a directory, name -> text.
pub fn html_pages(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// Whether an element is, or is inside, one of `tags`.
fn inside(e: Option<ElementRef<'_>>, tags: &[&str]) -> bool {
    let mut cur = e;
    while let Some(el) = cur {
        if tags.contains(&el.value().name()) {
            return true;
        }
        cur = el.parent().and_then(ElementRef::wrap);
    }
    false
}

/// The raw LaTeX a reader would see on a page: each `\(`, `$$` or backslash command in
/// a text node outside `<code>`, `<pre>` and the style sheet, with some context.
pub fn raw_latex(page: &str) -> Vec<String> {
    let doc = Html::parse_document(page);
    let mut found = vec![];
    for node in doc.tree.nodes() {
        let Node::Text(t) = node.value() else {
            continue;
        };
        let parent = node.parent().and_then(ElementRef::wrap);
        if inside(parent, &["code", "pre", "style"]) {
            continue;
        }
        let b = t.as_bytes();
        for i in 0..b.len().saturating_sub(1) {
            let raw = (b[i] == b'\\' && (b[i + 1] == b'(' || b[i + 1].is_ascii_alphabetic()))
                || (b[i] == b'$' && b[i + 1] == b'$');
            if raw {
                // Char boundaries by hand (`floor_char_boundary` is newer than the MSRV).
                let mut lo = i.saturating_sub(30);
                while !t.is_char_boundary(lo) {
                    lo -= 1;
                }
                let mut hi = (i + 30).min(t.len());
                while !t.is_char_boundary(hi) {
                    hi += 1;
                }
                found.push(t[lo..hi].to_string());
            }
        }
    }
    found
}

#[test]
fn no_page_shows_raw_latex_and_the_formulas_are_mathml() {
    let (_dir, pages) = run();
    let names: Vec<&str> = pages.keys().map(String::as_str).collect();
    for want in [
        "index.html",
        "tiny-pg.html",
        "scorecard-tiny-paper.html",
        "scorecard-tiny-paper-details.html",
    ] {
        assert!(names.contains(&want), "{want} not in {names:?}");
    }
    for (name, page) in &pages {
        let raw = raw_latex(page);
        assert!(raw.is_empty(), "{name}: raw LaTeX {raw:?}");
    }
    // The statement's two formulas, and the scorecard's quotes (one left open).
    assert!(pages["tiny-pg.html"].matches("<math").count() >= 2);
    let details = &pages["scorecard-tiny-paper-details.html"];
    assert!(
        details.contains("<math") && details.contains("𝔼"),
        "{details}"
    );
}

#[test]
fn the_checker_finds_raw_latex_and_ignores_code() {
    let page = |body: &str| {
        format!("<!DOCTYPE html><html><head><title>t</title></head><body>{body}</body></html>")
    };
    for bad in [r"<p>a \frac{1}{2}</p>", "<p>$$x$$</p>", r"<td>\(x\)</td>"] {
        assert!(!raw_latex(&page(bad)).is_empty(), "{bad}");
    }
    for ok in [
        r"<p><code>\frac{1}{2}</code> $5</p>",
        r"<pre>$$x$$</pre>",
        "<p>a\\ b</p>",
    ] {
        assert!(raw_latex(&page(ok)).is_empty(), "{ok}");
    }
}

/// The outcome a verdict cell's opening words name (`None` for a cell of no outcome).
fn outcome(cell: &str) -> Option<&'static str> {
    let w = cell
        .trim_start_matches("exploratory: ")
        .trim_start_matches("ablation: ");
    [
        ("refuted", "refuted"),
        ("erratum", "refuted"),
        ("not reproduced", "not reproduced"),
        ("inconsistent", "not reproduced"),
        ("inconclusive", "inconclusive"),
        ("not resolved", "not resolved"),
        ("not testable", "not testable"),
        ("out of regime", "out of regime"),
        ("not checkable", "not checkable"),
        ("holds", "holds"),
        ("consistent", "holds"),
        ("reproduced", "holds"),
    ]
    .into_iter()
    .find(|(p, _)| w.starts_with(p))
    .map(|(_, o)| o)
}

/// The outcomes a section heading allows its verdict cells, for a heading that names
/// an outcome (`None` for any other heading).
fn heading_allows(h: &str) -> Option<&'static [&'static str]> {
    let h = h.trim();
    if h.starts_with("Errata") {
        Some(&["refuted"])
    } else if h.starts_with("Statements that hold") || h.starts_with("Holds") {
        Some(&["holds"])
    } else if h.starts_with("Inconclusive") {
        Some(&["inconclusive"])
    } else if h.starts_with("Not testable") {
        Some(&["not testable"])
    } else if h.starts_with("Not resolved") {
        Some(&["not resolved"])
    } else {
        None
    }
}

/// Each verdict cell (a table cell opening with a bold word) under a heading that names
/// another outcome, as `heading: cell`.
pub fn contradictions(page: &str) -> Vec<String> {
    let doc = Html::parse_document(page);
    let sel = scraper::Selector::parse("h1, h2, h3, td").unwrap();
    let mut heading = String::new();
    let mut found = vec![];
    for e in doc.select(&sel) {
        let text: String = e.text().collect();
        if e.value().name() != "td" {
            heading = text;
            continue;
        }
        let opens_bold = e
            .first_child()
            .and_then(ElementRef::wrap)
            .is_some_and(|c| c.value().name() == "strong");
        let (Some(allowed), true) = (heading_allows(&heading), opens_bold) else {
            continue;
        };
        if let Some(o) = outcome(&text) {
            if !allowed.contains(&o) {
                found.push(format!("{heading}: {text}"));
            }
        }
    }
    found
}

/// The class of each coloured verdict cell, by the outcome its words name: one class
/// per outcome on every page (index, scorecards, claim pages), and each page's legend
/// shows that class under that outcome's name.
fn colours(page: &str, into: &mut BTreeMap<&'static str, std::collections::BTreeSet<String>>) {
    let doc = Html::parse_document(page);
    let sel = scraper::Selector::parse("td[class]").unwrap();
    for e in doc.select(&sel) {
        let class = e.value().attr("class").unwrap().to_string();
        if ["caught", "missed"].contains(&class.as_str()) {
            continue;
        }
        let text: String = e.text().collect();
        if let Some(o) = outcome(&text) {
            into.entry(o).or_default().insert(class);
        }
    }
    // The index's claim rows: the claim's cell is coloured by its verdict in plain words.
    let rows = scraper::Selector::parse("tr").unwrap();
    let td = scraper::Selector::parse("td").unwrap();
    for row in doc.select(&rows) {
        let cells: Vec<ElementRef<'_>> = row.select(&td).collect();
        let Some(class) = cells.first().and_then(|c| c.value().attr("class")) else {
            continue;
        };
        let words = cells[1..].iter().find(|c| {
            c.first_child()
                .and_then(ElementRef::wrap)
                .is_some_and(|s| s.value().name() == "strong")
        });
        if let Some(o) = words.and_then(|c| outcome(&c.text().collect::<String>())) {
            into.entry(o).or_default().insert(class.to_string());
        }
    }
}

#[test]
fn one_colour_per_outcome_a_legend_on_every_page_and_no_word_under_a_contradicting_heading() {
    let (_dir, pages) = run();
    let mut seen = BTreeMap::new();
    for (name, page) in &pages {
        let c = contradictions(page);
        assert!(c.is_empty(), "{name}: {c:?}");
        assert!(page.contains(r#"class="legend""#), "{name}: no legend");
        colours(page, &mut seen);
    }
    // The committed report set: the same, over every page (index, three scorecards and
    // their details, every claim page).
    let mut committed = 0;
    for (name, page) in html_pages(Path::new("reports")) {
        let c = contradictions(&page);
        assert!(c.is_empty(), "reports/{name}: {c:?}");
        committed += 1;
    }
    assert!(committed > 10, "{committed} committed pages");
    let mut classes = std::collections::BTreeSet::new();
    for (outcome, cls) in &seen {
        assert_eq!(cls.len(), 1, "{outcome} has several colours: {cls:?}");
        let c = cls.iter().next().unwrap();
        assert!(
            classes.insert(c.clone()),
            "{c} is the colour of two outcomes"
        );
        assert!(
            pages["index.html"].contains(&format!(r#"<span class="{c}">"#)),
            "{outcome}: {c} not in the legend"
        );
    }
    assert!(seen.len() >= 2, "{seen:?}");
}

#[test]
fn the_contradiction_checker_finds_a_holds_under_inconclusive() {
    let page = |body: &str| {
        format!("<!DOCTYPE html><html><head><title>t</title></head><body>{body}</body></html>")
    };
    let bad =
        page("<h2>Inconclusive</h2><table><tr><td><strong>holds</strong> x</td></tr></table>");
    assert_eq!(contradictions(&bad).len(), 1);
    let bad = page("<h2>Errata claimed</h2><table><tr><td><strong>not reproduced (on y)</strong></td></tr></table>");
    assert_eq!(contradictions(&bad).len(), 1);
    let ok = page("<h2>Inconclusive</h2><table><tr><td><strong>inconclusive</strong></td><td>holds at 3 points</td></tr></table><h2>Findings</h2><table><tr><td><strong>holds</strong></td></tr></table>");
    assert!(contradictions(&ok).is_empty());
}

/// What points outside the report set on a page: a link or image that is neither
/// http(s), a fragment, nor a file of `dir` (no absolute path, no `..`), and text naming
/// a file outside the repository (a machine path, the shared folder, review documents).
/// With `resolve`, a local link must also name a file of `dir`.
fn outside_links(dir: &Path, name: &str, page: &str, html: bool, resolve: bool) -> Vec<String> {
    let mut found = vec![];
    let mut targets = vec![];
    if html {
        let doc = Html::parse_document(page);
        let sel = scraper::Selector::parse("[href], [src]").unwrap();
        for e in doc.select(&sel) {
            for a in ["href", "src"] {
                targets.extend(e.value().attr(a).map(str::to_string));
            }
        }
    } else {
        // Markdown links and images: `](target)`.
        for (i, _) in page.match_indices("](") {
            let t = &page[i + 2..];
            let end = t.find(')').unwrap_or(t.len());
            let t = &t[..end];
            if !t.contains(' ') {
                targets.push(t.to_string());
            }
        }
    }
    for t in targets {
        if t.starts_with("https://") || t.starts_with("http://") || t.starts_with('#') {
            continue;
        }
        let file = t.split(['#', '?']).next().unwrap_or("");
        let inside = !file.starts_with('/')
            && !file.contains(':')
            && !file.split('/').any(|s| s == "..")
            && (!resolve || dir.join(file).is_file());
        if !inside {
            found.push(format!("{name}: link {t}"));
        }
    }
    for bad in [
        "/work/",
        "/home/",
        "/tmp/",
        "file://",
        "../shared",
        "shared/reviews",
        "reviews/20",
    ] {
        if page.contains(bad) {
            found.push(format!("{name}: names {bad}"));
        }
    }
    found
}

/// Every page of a report directory (HTML and Markdown), name -> (text, is HTML).
fn all_pages(dir: &Path) -> Vec<(String, String, bool)> {
    let mut v: Vec<(String, String, bool)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let ext = p.extension()?.to_str()?.to_string();
            (ext == "html" || ext == "md").then(|| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(&p).unwrap(), ext == "html")
            })
        })
        .collect();
    v.sort();
    v
}

#[test]
fn no_page_links_or_points_outside_the_repository() {
    let (dir, _) = run();
    let out = dir.path().join("out");
    let pages = all_pages(&out);
    assert!(pages.len() >= 8, "{}", pages.len());
    for (name, page, html) in &pages {
        let bad = outside_links(&out, name, page, *html, true);
        assert!(bad.is_empty(), "{bad:?}");
        // The meaning of a margin's sign is written once per page, not per row.
        assert!(page.matches("0 violates").count() <= 1, "{name}: repeated");
        // An issue number is an internal pointer: the pages drop it.
        assert!(!page.contains("(issue "), "{name}: an issue pointer");
    }
    assert!(pages
        .iter()
        .any(|(_, p, _)| p.contains("What this claim judges now.")));
    // The committed report set (index, scorecards, claim pages, AUDIT, PRIVACY, ...):
    // nothing outside it (whether each local link resolves is checked on a fresh run,
    // above; pages written by other commands, FAULTS.md, are regenerated by them).
    let committed = all_pages(Path::new("reports"));
    assert!(committed.len() > 20, "{}", committed.len());
    for (name, page, html) in &committed {
        let bad = outside_links(Path::new("reports"), name, page, *html, false);
        assert!(bad.is_empty(), "reports/{bad:?}");
    }
    // The checker: an absolute path, a way out and a review document are found.
    for (page, html) in [
        (r#"<a href="/etc/x.html">x</a>"#, true),
        (r#"<img src="../p.svg">"#, true),
        ("see [r](../shared/reviews/x.md)", false),
        ("the file /work/main/x", false),
    ] {
        assert!(
            !outside_links(&out, "t", page, html, false).is_empty(),
            "{page}"
        );
    }
}
