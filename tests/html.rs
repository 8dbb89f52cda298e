//! The HTML reports, end to end on a tiny claim: every page parses with a real HTML5
//! parser without errors, every local link and image resolves, no page needs a script or
//! an external asset, the pages and plots are the same bytes whatever the thread count,
//! negative controls are marked in the SVG, and a `scorecard-*.md` beside the reports
//! gets its page linked from the index.
use scraper::{Html, Selector};
use std::collections::BTreeMap;
use std::path::Path;

/// A random-features claim whose negative control is judged by the exponent prediction
/// (so its points and fitted line share a panel with the main variant's), plus an
/// inequality that only the main variant is judged by.
/// The header of the tiny claim (`util::tiny_rf_claim`).
const CLAIM_HEAD: &str = r#"
id: tiny-html
title: "noise term along n, tiny sizes (test only) <with> & markup"
source: {paper: "test", section: "s", equation: "Eq. 20"}
statement: "noise term along *n* = sigma_a * sqrt(n) + x_i^2 + f_*(x); the overlap <u, mu> is an inner product"
labels: {n: "training samples n", noise_term: "noise term (squared error)"}
"#;

fn claim() -> String {
    // 8 replicates: at the family-wise level 2 leave the control's interval too wide to
    // catch it, and the index must show a caught control.
    crate::util::tiny_rf_claim(CLAIM_HEAD).replace("replicates: 2}", "replicates: 8}")
}

fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let claims = dir.path().join("claims");
    std::fs::create_dir(&claims).unwrap();
    std::fs::write(claims.join("tiny-html.yaml"), claim()).unwrap();
    dir
}

/// Runs the claim into `dir/out` with `threads` rayon threads; the reports are written
/// whatever the exit code (0, or 1 if the control were not caught).
fn run_into(dir: &Path, out: &str, threads: &str) {
    run_with(dir, out, threads, &[]);
}

/// [`run_into`] with extra arguments of `run`.
fn run_with(dir: &Path, out: &str, threads: &str, extra: &[&str]) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .current_dir(dir)
        .env("RAYON_NUM_THREADS", threads)
        .args(["run", "--no-baseline", "--out", out])
        .args(extra)
        .output()
        .expect("run dpclaims");
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Every file of a directory with one of the extensions, name -> bytes.
fn files(dir: &Path, exts: &[&str]) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| exts.contains(&e.to_string_lossy().as_ref()))
        })
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

/// Parses a page (no parse error allowed) and returns every `href` and `src`.
fn parse_links(name: &str, text: &str) -> Vec<String> {
    let doc = Html::parse_document(text);
    assert!(
        doc.errors.is_empty(),
        "{name}: parse errors {:?}",
        doc.errors
    );
    let sel = |s: &str| Selector::parse(s).unwrap();
    assert_eq!(doc.select(&sel("script")).count(), 0, "{name}: a script");
    assert_eq!(doc.select(&sel("title")).count(), 1, "{name}: one <title>");
    let mut links: Vec<String> = doc
        .select(&sel("[href]"))
        .filter_map(|e| e.value().attr("href"))
        .map(str::to_string)
        .collect();
    links.extend(
        doc.select(&sel("[src]"))
            .filter_map(|e| e.value().attr("src"))
            .map(str::to_string),
    );
    links
}

#[test]
fn every_html_page_parses_and_every_local_link_and_image_resolves() {
    let w = workdir();
    let dir = w.path();
    std::fs::create_dir(dir.join("out")).unwrap();
    // A scorecard written beside the reports before they are: the index must link it.
    std::fs::write(
        dir.join("out/scorecard-demo.md"),
        "# Scorecard\n\n| a | b |\n|---|---|\n| 1 | [claim](tiny-html.md) |\n",
    )
    .unwrap();
    run_into(dir, "out", "2");
    let out = dir.join("out");
    let pages = files(&out, &["html"]);
    let names: Vec<&str> = pages.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["index.html", "scorecard-demo.html", "tiny-html.html"]
    );
    let mut checked = 0;
    for (name, bytes) in &pages {
        let text = std::str::from_utf8(bytes).unwrap();
        let links = parse_links(name, text);
        assert!(!links.is_empty(), "{name}: no link");
        for l in links {
            assert!(
                !l.contains("://") && !l.starts_with('/'),
                "{name}: non-local link {l}"
            );
            let file = l.split('#').next().unwrap();
            assert!(out.join(file).is_file(), "{name}: {l} does not resolve");
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} links checked");
    let index = std::str::from_utf8(&pages["index.html"]).unwrap();
    for needle in [
        r#"href="tiny-html.html""#,
        r#"href="scorecard-demo.html""#,
        "noise-grows-with-n (negative control)",
        // The verdicts are coloured: a main variant's verdict class, a control's status.
        r#"<td class="caught">"#,
    ] {
        assert!(index.contains(needle), "index.html lacks {needle}");
    }
    let page = std::str::from_utf8(&pages["tiny-html.html"]).unwrap();
    assert!(page.contains(r#"<img class="plot" src="tiny-html.svg""#));
    // Text from the spec is escaped, not markup.
    assert!(page.contains("&lt;with&gt; &amp; markup"), "title escaped");
    assert!(page.contains("&lt;u, mu&gt;"), "statement escaped");
    // Math in the statement is shown as written, not read as Markdown emphasis.
    assert!(
        page.contains("noise term along *n* = sigma_a * sqrt(n) + x_i^2 + f_*(x)"),
        "statement's math as written"
    );
    assert!(
        !page.contains("<em>n</em>"),
        "no emphasis from the statement's math"
    );
    assert!(page.contains("Sweep tables"), "the sections of the .md");
    let card = std::str::from_utf8(&pages["scorecard-demo.html"]).unwrap();
    assert!(card.contains("<table>") && card.contains(r#"href="tiny-html.html""#));
}

#[test]
fn html_and_svg_are_the_same_bytes_whatever_the_thread_count() {
    let w = workdir();
    let dir = w.path();
    run_into(dir, "one", "1");
    run_into(dir, "two", "2");
    let a = files(&dir.join("one"), &["html", "svg"]);
    let b = files(&dir.join("two"), &["html", "svg"]);
    assert_eq!(a.len(), 3, "{:?}", a.keys().collect::<Vec<_>>());
    assert_eq!(a, b);
    assert!(
        files(&dir.join("one"), &["png", "pdf"]).is_empty(),
        "PNG and PDF only on request"
    );
}

#[test]
fn a_label_of_an_unknown_metric_or_variable_is_an_error_naming_it() {
    let w = workdir();
    let dir = w.path();
    let path = dir.join("claims/tiny-html.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("labels: {n:", "labels: {nn:")).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .current_dir(dir)
        .args(["run", "--no-baseline", "--out", "out"])
        .output()
        .expect("run dpclaims");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("labels.nn"), "{err}");
}

#[test]
fn figures_png_and_pdf_on_request_are_valid_and_the_same_bytes_on_every_run() {
    let w = workdir();
    let dir = w.path();
    run_with(dir, "one", "1", &["--figures", "svg,png,pdf"]);
    run_with(dir, "two", "2", &["--figures", "png,pdf"]);
    let a = files(&dir.join("one"), &["png", "pdf", "svg"]);
    let b = files(&dir.join("two"), &["png", "pdf", "svg"]);
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        ["tiny-html.pdf", "tiny-html.png", "tiny-html.svg"]
    );
    assert_eq!(a, b, "PNG and PDF bytes differ between two renders");
    let png = &a["tiny-html.png"];
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    // IHDR: twice the SVG's width, in pixels (big-endian u32 at bytes 16..20).
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    assert!(width >= 1280, "PNG width {width}");
    assert!(a["tiny-html.pdf"].starts_with(b"%PDF-"), "not a PDF");
}

#[test]
fn negative_controls_are_marked_in_the_svg_and_the_prediction_follows_the_main_variant() {
    let w = workdir();
    let dir = w.path();
    run_into(dir, "out", "2");
    let svg = std::fs::read_to_string(dir.join("out/tiny-html.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    // The first panel is the exponent prediction's.
    let panel = doc
        .root_element()
        .children()
        .find(|n| n.has_tag_name("svg"))
        .expect("a panel");
    let texts: Vec<&str> = panel
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .collect();
    for label in [
        "noise-grows-with-n (negative control)",
        "noise-grows-with-n (negative control): fitted slope",
        "(through prop22)",
        // The spec's labels on the axes; the prediction's name and verdict as the title.
        "training samples n",
        "noise term (squared error)",
        "predicted ± tolerance 0.5000",
    ] {
        assert!(
            texts.iter().any(|t| t.contains(label)),
            "no legend entry {label}: {texts:?}"
        );
    }
    let circles: Vec<roxmltree::Node> = panel
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .collect();
    let hollow: Vec<&roxmltree::Node> = circles
        .iter()
        .filter(|n| n.attribute("fill") == Some("white"))
        .collect();
    let filled = circles.len() - hollow.len();
    // Four points per variant plus one legend marker each.
    assert_eq!(
        (hollow.len(), filled),
        (5, 5),
        "hollow markers for the control"
    );
    let title = panel
        .descendants()
        .find(|n| n.has_tag_name("text") && n.attribute("font-weight") == Some("bold"))
        .and_then(|n| n.text())
        .expect("a title");
    assert!(title.starts_with("vs-n: "), "title {title}");
    let control_colour = hollow[0].attribute("stroke").expect("a ring colour");
    assert_eq!(control_colour, "#7F7F7F", "controls are grey");
    let dashed_in_control_colour = panel.descendants().filter(|n| {
        n.has_tag_name("polyline")
            && n.attribute("stroke") == Some(control_colour)
            && n.attribute("stroke-dasharray").is_some()
    });
    assert_eq!(
        dashed_in_control_colour.count(),
        1,
        "the control's dashed fit"
    );
    // The legend lies inside the panel's viewBox.
    let width: f64 = panel.attribute("width").unwrap().parse().unwrap();
    let max_x = panel
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter(|n| n.attribute("text-anchor").is_none())
        .map(|n| {
            let x: f64 = n.attribute("x").unwrap().parse().unwrap();
            x + n.text().unwrap_or("").chars().count() as f64 * 0.62 * 11.0
        })
        .fold(0.0, f64::max);
    assert!(max_x <= width, "legend text reaches {max_x} > {width}");
}
