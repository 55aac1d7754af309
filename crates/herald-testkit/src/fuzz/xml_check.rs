//! A small checker of XML 1.0 well-formedness, enough for what `herald_info::xml` writes:
//! elements, attributes, character data and references; no DTD, comments, CDATA sections or
//! processing instructions (any of those is refused). It returns what a conforming parser
//! would hand an application: line ends normalized, attribute values normalized (literal
//! tabs and line ends become spaces), references replaced.

/// An element as a parser reports it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Element {
    pub name: String,
    pub attributes: Vec<(String, String)>,
    pub children: Vec<Node>,
}

/// Content of an element.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Node {
    Element(Element),
    Text(String),
}

impl Element {
    /// Returns the value of attribute `name`.
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// Returns the child elements.
    pub fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|node| match node {
            Node::Element(element) => Some(element),
            Node::Text(_) => None,
        })
    }

    /// Returns the character data directly inside, concatenated.
    pub fn text(&self) -> String {
        self.children
            .iter()
            .filter_map(|node| match node {
                Node::Text(text) => Some(text.as_str()),
                Node::Element(_) => None,
            })
            .collect()
    }
}

/// Returns true for a character XML 1.0 allows in a document (production `Char`).
pub(super) fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
        || c >= '\u{10000}'
}

/// Parses `text` as a document holding one element, with only white space around it.
///
/// # Errors
/// A sentence saying what is not well formed, and where.
pub(super) fn parse_document(text: &str) -> Result<Element, String> {
    if let Some(bad) = text.chars().find(|c| !is_xml_char(*c)) {
        return Err(format!("U+{:04X} is not an XML character", u32::from(bad)));
    }
    // Line-end handling (XML 1.0 §2.11) comes before everything else.
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut parser = Parser {
        chars: normalized.chars().collect(),
        at: 0,
    };
    parser.skip_space();
    let root = parser.element()?;
    parser.skip_space();
    if parser.at != parser.chars.len() {
        return Err(parser.fail("content after the root element"));
    }
    Ok(root)
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn fail(&self, what: &str) -> String {
        format!("{what} at character {}", self.at)
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn eat(&mut self, expected: char) -> bool {
        let found = self.peek() == Some(expected);
        self.at += usize::from(found);
        found
    }

    fn expect(&mut self, expected: char) -> Result<(), String> {
        match self.eat(expected) {
            true => Ok(()),
            false => Err(self.fail(&format!("expected `{expected}`"))),
        }
    }

    fn skip_space(&mut self) -> bool {
        let start = self.at;
        while matches!(self.peek(), Some(' ' | '\t' | '\n')) {
            self.at += 1;
        }
        self.at > start
    }

    fn name(&mut self) -> Result<String, String> {
        let start = self.at;
        let starts_name =
            |c: char| c.is_ascii_alphabetic() || matches!(c, '_' | ':') || c >= '\u{C0}';
        if !self.peek().is_some_and(starts_name) {
            return Err(self.fail("expected a name"));
        }
        while self
            .peek()
            .is_some_and(|c| starts_name(c) || c.is_ascii_digit() || matches!(c, '-' | '.'))
        {
            self.at += 1;
        }
        Ok(self.chars[start..self.at].iter().collect())
    }

    fn element(&mut self) -> Result<Element, String> {
        self.expect('<')?;
        let name = self.name()?;
        let mut element = Element {
            name,
            attributes: Vec::new(),
            children: Vec::new(),
        };
        loop {
            let spaced = self.skip_space();
            match self.peek() {
                Some('/') => {
                    self.at += 1;
                    self.expect('>')?;
                    return Ok(element);
                }
                Some('>') => {
                    self.at += 1;
                    break;
                }
                _ if spaced => {
                    let (key, value) = self.attribute()?;
                    if element.attribute(&key).is_some() {
                        return Err(self.fail(&format!("attribute `{key}` appears twice")));
                    }
                    element.attributes.push((key, value));
                }
                _ => return Err(self.fail("expected white space, `>` or `/>`")),
            }
        }
        self.content(&mut element)?;
        let closing = self.name()?;
        if closing != element.name {
            return Err(self.fail(&format!("`</{closing}>` closes `<{}>`", element.name)));
        }
        self.skip_space();
        self.expect('>')?;
        Ok(element)
    }

    fn attribute(&mut self) -> Result<(String, String), String> {
        let key = self.name()?;
        self.skip_space();
        self.expect('=')?;
        self.skip_space();
        let quote = match self.peek() {
            Some(quote @ ('"' | '\'')) => quote,
            _ => return Err(self.fail("expected a quoted value")),
        };
        self.at += 1;
        let mut value = String::new();
        loop {
            match self.peek() {
                None => return Err(self.fail("unterminated attribute value")),
                Some('<') => return Err(self.fail("`<` in an attribute value")),
                Some('&') => value.push(self.reference()?),
                Some(c) if c == quote => {
                    self.at += 1;
                    return Ok((key, value));
                }
                // Attribute-value normalization (XML 1.0 §3.3.3).
                Some('\t' | '\n') => {
                    self.at += 1;
                    value.push(' ');
                }
                Some(c) => {
                    self.at += 1;
                    value.push(c);
                }
            }
        }
    }

    /// Reads content up to and including the `</` of the end tag.
    fn content(&mut self, element: &mut Element) -> Result<(), String> {
        let mut text = String::new();
        loop {
            match self.peek() {
                None => return Err(self.fail(&format!("`<{}>` is not closed", element.name))),
                Some('<') => {
                    if !text.is_empty() {
                        element.children.push(Node::Text(std::mem::take(&mut text)));
                    }
                    match self.chars.get(self.at + 1) {
                        Some('/') => {
                            self.at += 2;
                            return Ok(());
                        }
                        Some('!' | '?') => return Err(self.fail("markup this checker refuses")),
                        _ => element.children.push(Node::Element(self.element()?)),
                    }
                }
                Some('&') => text.push(self.reference()?),
                Some(c) => {
                    if c == '>' && self.at >= 2 && self.chars[self.at - 2..self.at] == [']', ']'] {
                        return Err(self.fail("`]]>` in character data"));
                    }
                    self.at += 1;
                    text.push(c);
                }
            }
        }
    }

    fn reference(&mut self) -> Result<char, String> {
        self.expect('&')?;
        let start = self.at;
        let Some(length) = self.chars[start..].iter().position(|c| *c == ';') else {
            return Err(self.fail("unterminated reference"));
        };
        let body: String = self.chars[start..start + length].iter().collect();
        self.at = start + length + 1;
        let code = match body.as_str() {
            "lt" => return Ok('<'),
            "gt" => return Ok('>'),
            "amp" => return Ok('&'),
            "quot" => return Ok('"'),
            "apos" => return Ok('\''),
            _ => match body.strip_prefix("#x") {
                Some(hex) if is_digits(hex, 16) => u32::from_str_radix(hex, 16).ok(),
                _ => body
                    .strip_prefix('#')
                    .filter(|decimal| is_digits(decimal, 10))
                    .and_then(|decimal| decimal.parse().ok()),
            },
        };
        code.and_then(char::from_u32)
            .filter(|c| is_xml_char(*c))
            .ok_or_else(|| self.fail(&format!("bad reference `&{body};`")))
    }
}

fn is_digits(text: &str, radix: u32) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_digit(radix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_a_parser_reads() {
        let root = parse_document("<a x=\"1&amp;2\tb\" y='&#x3c;'>t&lt;<b/>&#10;</a>\n").unwrap();
        assert_eq!(root.attribute("x"), Some("1&2 b"));
        assert_eq!(root.attribute("y"), Some("<"));
        assert_eq!(root.text(), "t<\n");
        assert_eq!(root.elements().count(), 1);
    }

    #[test]
    fn refuses_what_is_not_well_formed() {
        for bad in [
            "<a>",
            "<a></b>",
            "<a x=\"<\"/>",
            "<a x=\"1\" x=\"2\"/>",
            "<a>&nbsp;</a>",
            "<a>&#1;</a>",
            "<a>\u{1}</a>",
            "<a>]]></a>",
            "<a/><b/>",
            "<a x=1/>",
        ] {
            assert!(parse_document(bad).is_err(), "{bad}");
        }
    }
}
