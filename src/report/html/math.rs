//! LaTeX to MathML with `pulldown-latex` (MathML Core, rendered natively by Chromium,
//! Firefox and Safari: the pages stay static, without JavaScript or web fonts).
//!
//! Why this crate: it follows the MathML Core specification (the subset the three
//! engines implement), reports an unknown command or an unbalanced group as an error
//! event instead of guessing (so a fragment it cannot read falls back to code, never to
//! wrong math), knows every command the specs use (`\left…\right`, `\text`,
//! `\intercal`, `\gets`, `\mathcal`), and depends on nothing but `bumpalo`, which
//! the lock file already had. `latex2mathml` (0.2.3, a Rust 2018 crate) writes MathML 3
//! markup and was the other candidate.
use pulldown_latex::{push_mathml, Parser, ParserError, RenderConfig, Storage};

/// The papers' own macros (the private-feature-learning blog's `\N` for the Gaussian,
/// `\E` for the expectation), spelled out for the converter: `(name, replacement)`.
const MACROS: &[(&str, &str)] = &[("N", "\\mathcal{N}"), ("E", "\\mathbb{E}")];

/// `tex` with each macro of [`MACROS`] replaced where it is a whole command (`\N(` but
/// not `\Nu` or `\nabla`).
fn expand(tex: &str) -> String {
    let mut out = String::with_capacity(tex.len());
    let mut rest = tex;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let name_len = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let name = &after[..name_len];
        match MACROS.iter().find(|(m, _)| *m == name) {
            Some((_, rep)) => out.push_str(rep),
            None => {
                out.push('\\');
                // A backslash before a non-letter (`\|`, `\\`) keeps its next character.
                let skip = if name_len == 0 {
                    after.chars().next().map_or(0, char::len_utf8)
                } else {
                    name_len
                };
                out.push_str(&after[..skip]);
                rest = &after[skip..];
                continue;
            }
        }
        rest = &after[name_len..];
    }
    out.push_str(rest);
    out
}

/// The MathML of an inline formula, or `None` when the converter reports an error (an
/// unknown command, an unbalanced group), fails in any other way, or writes anything
/// outside the allow-list of [`super::sanitise`] (the converter copies `\operatorname{…}`
/// and operators as typed: its output is parsed and written back, never trusted): the
/// caller then shows the source as code.
pub(super) fn mathml(tex: &str) -> Option<String> {
    let tex = expand(tex);
    if tex.trim().is_empty() {
        return None;
    }
    // A converter bug must not end the run: a panic inside it is a fragment shown as code.
    std::panic::catch_unwind(|| {
        let storage = Storage::new();
        let events = Parser::new(&tex, &storage)
            .collect::<Result<Vec<_>, ParserError>>()
            .ok()?;
        let mut out = String::new();
        push_mathml(
            &mut out,
            events.into_iter().map(Ok::<_, ParserError>),
            RenderConfig::default(),
        )
        .ok()?;
        super::sanitise::sanitise(&out).ok()
    })
    .ok()
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macros_are_expanded_only_as_whole_commands() {
        assert_eq!(
            expand(r"\N(0, 1) \Nu \E_x \nabla \\ \|g\|"),
            r"\mathcal{N}(0, 1) \Nu \mathbb{E}_x \nabla \\ \|g\|"
        );
    }

    #[test]
    fn formulas_of_the_specs_convert_and_bad_ones_are_none() {
        for tex in [
            r"\sigma_a = \sqrt{\eta_a T} \frac{\sqrt{8\log(1/\delta)}}{\varepsilon}",
            r"g^C_a \gets g_a \cdot \max\left(1, \frac{\left\|g^C_a\right\|}{C_a}\right).",
            r"a_0 = \frac{1}{\sqrt{p}}(1, \ldots, 1)^\intercal",
            r"\mathcal{R}(f_{\text{NN}}) = \E_x[(f_{\text{NN}}(x) - f_*(x))^2]",
            r"\delta \in (0, 1), \quad \varepsilon \in \left(0, 8 \log(1/\delta)\right)",
            r"a_t \gets a_{t-1} + \sqrt{\eta_a} \frac{C_a}{n} \sigma_a \N(0, 1)",
        ] {
            let m = mathml(tex).unwrap_or_else(|| panic!("{tex}"));
            assert!(m.starts_with("<math") && !m.contains('\\'), "{tex}: {m}");
        }
        for bad in [
            r"\frac{1}{",
            r"\nosuchcommand x",
            "",
            "  ",
            r"\left( x",
            "}{",
            r"x^^",
        ] {
            assert_eq!(mathml(bad), None, "{bad}");
        }
    }
}
