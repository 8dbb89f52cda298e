//! The text of an expression to its syntax tree: a tokenizer, then a recursive-descent
//! parser with one function per precedence level (the grammar is in the [`super`] docs).
//! Every error names the byte position of the offending token; input length and nesting
//! are bounded so that no input can overflow the stack.
use super::{BinOp, ExprError, Func, Node};

/// Parses the whole of `src` into its syntax tree.
pub(super) fn parse(src: &str) -> Result<Node, ExprError> {
    let tokens = tokenize(src)?;
    let mut parser = Parser {
        src,
        tokens,
        pos: 0,
        depth: 0,
    };
    let root = parser.parse_expr()?;
    match parser.peek() {
        Tok::End => Ok(root),
        Tok::Num(_) | Tok::Ident(_) | Tok::LParen => Err(parser.error(
            "an operator or the end of the expression (implicit multiplication is not supported; write '*')",
        )),
        _ => Err(parser.error("an operator or the end of the expression")),
    }
}

// ---------------------------------------------------------------------------------------
// Tokenizer

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Ident(String),
    Plus,
    Minus,
    Star,
    Slash,
    Caret,
    LParen,
    RParen,
    Comma,
    End,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Num(v) => format!("number {v}"),
            Tok::Ident(name) => format!("name '{name}'"),
            Tok::Plus => "'+'".into(),
            Tok::Minus => "'-'".into(),
            Tok::Star => "'*'".into(),
            Tok::Slash => "'/'".into(),
            Tok::Caret => "'^'".into(),
            Tok::LParen => "'('".into(),
            Tok::RParen => "')'".into(),
            Tok::Comma => "','".into(),
            Tok::End => "end of expression".into(),
        }
    }
}

/// Maximum number of tokens: bounds the depth of left-nested trees such as `1+1+...+1`,
/// which evaluation walks recursively.
const MAX_TOKENS: usize = 2000;

/// Splits `src` into tokens with their byte offsets; the last token is always `End`.
fn tokenize(src: &str) -> Result<Vec<(Tok, usize)>, ExprError> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let syntax = |position: usize, expected: &str, found: String| ExprError::Syntax {
        expr: src.to_string(),
        position,
        expected: expected.to_string(),
        found,
    };
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b'0'..=b'9' | b'.' => {
                let digits = |i: &mut usize| {
                    let from = *i;
                    while *i < bytes.len() && bytes[*i].is_ascii_digit() {
                        *i += 1;
                    }
                    *i - from
                };
                let mut count = digits(&mut i);
                if i < bytes.len() && bytes[i] == b'.' {
                    i += 1;
                    count += digits(&mut i);
                }
                if count == 0 {
                    return Err(syntax(start, "a digit", "'.'".into()));
                }
                // The exponent is only consumed when digits follow, so `2e` is a number
                // followed by a name (and then a syntax error), not a malformed number.
                if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
                    let mut j = i + 1;
                    if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
                        j += 1;
                    }
                    if j < bytes.len() && bytes[j].is_ascii_digit() {
                        i = j;
                        digits(&mut i);
                    }
                }
                let text = &src[start..i];
                let value: f64 = text
                    .parse()
                    .map_err(|_| syntax(start, "a number", format!("'{text}'")))?;
                out.push((Tok::Num(value), start));
                continue;
            }
            b'A'..=b'Z' | b'a'..=b'z' | b'_' => {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                out.push((Tok::Ident(src[start..i].to_string()), start));
                continue;
            }
            _ => {}
        }
        let tok = match c {
            b'+' => Tok::Plus,
            b'-' => Tok::Minus,
            b'*' => Tok::Star,
            b'/' => Tok::Slash,
            b'^' => Tok::Caret,
            b'(' => Tok::LParen,
            b')' => Tok::RParen,
            b',' => Tok::Comma,
            _ => {
                let ch = src[start..].chars().next().unwrap_or('?');
                return Err(syntax(
                    start,
                    "a number, a name, an operator or a parenthesis",
                    format!("character '{ch}'"),
                ));
            }
        };
        out.push((tok, start));
        i += 1;
    }
    if out.len() > MAX_TOKENS {
        return Err(syntax(
            out[MAX_TOKENS].1,
            &format!("an expression of at most {MAX_TOKENS} tokens"),
            "a longer one".to_string(),
        ));
    }
    out.push((Tok::End, src.len()));
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// Parser (recursive descent, one function per precedence level)

/// Maximum nesting of parentheses and unary signs; deeper input is a syntax error
/// rather than a stack overflow.
const MAX_DEPTH: usize = 200;

struct Parser<'a> {
    src: &'a str,
    tokens: Vec<(Tok, usize)>,
    pos: usize,
    /// Current recursion depth of `parse_unary` (every recursive cycle passes there).
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        self.tokens.get(self.pos).map_or(&Tok::End, |(t, _)| t)
    }

    fn offset(&self) -> usize {
        self.tokens
            .get(self.pos)
            .map_or(self.src.len(), |(_, p)| *p)
    }

    fn advance(&mut self) -> Tok {
        let tok = self.peek().clone();
        if self.pos < self.tokens.len() {
            self.pos += 1;
        }
        tok
    }

    fn error(&self, expected: &str) -> ExprError {
        ExprError::Syntax {
            expr: self.src.to_string(),
            position: self.offset(),
            expected: expected.to_string(),
            found: self.peek().describe(),
        }
    }

    fn parse_expr(&mut self) -> Result<Node, ExprError> {
        let mut left = self.parse_term()?;
        loop {
            let op = match self.peek() {
                Tok::Plus => BinOp::Add,
                Tok::Minus => BinOp::Sub,
                _ => return Ok(left),
            };
            self.advance();
            let right = self.parse_term()?;
            left = Node::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn parse_term(&mut self) -> Result<Node, ExprError> {
        let mut left = self.parse_unary()?;
        loop {
            let op = match self.peek() {
                Tok::Star => BinOp::Mul,
                Tok::Slash => BinOp::Div,
                _ => return Ok(left),
            };
            self.advance();
            let right = self.parse_unary()?;
            left = Node::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn parse_unary(&mut self) -> Result<Node, ExprError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(&format!("at most {MAX_DEPTH} levels of nesting")));
        }
        self.depth += 1;
        let node = self.parse_unary_inner();
        self.depth -= 1;
        node
    }

    fn parse_unary_inner(&mut self) -> Result<Node, ExprError> {
        match self.peek() {
            Tok::Minus => {
                self.advance();
                Ok(Node::Neg(Box::new(self.parse_unary()?)))
            }
            Tok::Plus => {
                self.advance();
                self.parse_unary()
            }
            _ => self.parse_power(),
        }
    }

    fn parse_power(&mut self) -> Result<Node, ExprError> {
        let base = self.parse_primary()?;
        if matches!(self.peek(), Tok::Caret) {
            self.advance();
            // The exponent is a `unary`, which itself may be a power: right-associative.
            let exponent = self.parse_unary()?;
            return Ok(Node::Bin(BinOp::Pow, Box::new(base), Box::new(exponent)));
        }
        Ok(base)
    }

    fn parse_primary(&mut self) -> Result<Node, ExprError> {
        let start = self.offset();
        match self.peek().clone() {
            Tok::Num(v) => {
                self.advance();
                Ok(Node::Num(v))
            }
            Tok::LParen => {
                self.advance();
                let inner = self.parse_expr()?;
                self.expect_rparen()?;
                Ok(inner)
            }
            Tok::Ident(name) => {
                self.advance();
                if matches!(self.peek(), Tok::LParen) {
                    self.advance();
                    return self.parse_call(name, start);
                }
                if name == "pi" {
                    return Ok(Node::Num(std::f64::consts::PI));
                }
                if Func::from_name(&name).is_some() {
                    return Err(self.error(&format!("'(' after function name '{name}'")));
                }
                Ok(Node::Var(name))
            }
            _ => Err(self.error("a number, a name or '('")),
        }
    }

    fn expect_rparen(&mut self) -> Result<(), ExprError> {
        if matches!(self.peek(), Tok::RParen) {
            self.advance();
            Ok(())
        } else {
            Err(self.error("')'"))
        }
    }

    /// Parses the arguments after `name(`; `start` is the byte offset of the name.
    fn parse_call(&mut self, name: String, start: usize) -> Result<Node, ExprError> {
        let Some(func) = Func::from_name(&name) else {
            let hint = if name == "log" {
                " (log is rejected because its base is ambiguous; use ln for the natural logarithm, log2 or log10)"
            } else {
                ""
            };
            return Err(ExprError::UnknownFunction {
                expr: self.src.to_string(),
                name,
                position: start,
                hint: hint.to_string(),
            });
        };
        let mut args = vec![self.parse_expr()?];
        while matches!(self.peek(), Tok::Comma) {
            self.advance();
            args.push(self.parse_expr()?);
        }
        if !matches!(self.peek(), Tok::RParen) {
            return Err(self.error("',' or ')'"));
        }
        self.advance();
        let arity = func.info().arity;
        if !arity.accepts(args.len()) {
            return Err(ExprError::Arity {
                expr: self.src.to_string(),
                name,
                position: start,
                expected: arity.words(),
                got: args.len(),
            });
        }
        Ok(Node::Call(func, args))
    }
}
