//! `herald set`, `get`, `ls`, `types`: information objects from the command line.

use std::process::ExitCode;

use herald_proto::info::{ObjectData, SelectionData, TypeData, UpdateMode};
use herald_proto::time::format_iso8601;
use serde_json::{json, Value as Json};

use super::{parse_fields, ServerArgs};
use crate::json;

/// Create or update an information object.
#[derive(Debug, clap::Args)]
pub struct SetArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// `Namespace.Object`.
    name: String,
    /// The type (needed to create), then `attribute=value` pairs.
    #[arg(required = true)]
    rest: Vec<String>,
    /// Print the object after the change as JSON.
    #[arg(long)]
    json: bool,
}

/// Show one information object.
#[derive(Debug, clap::Args)]
pub struct GetArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// `Namespace.Object`.
    name: String,
    /// Print JSON.
    #[arg(long, conflicts_with = "xml")]
    json: bool,
    /// Print Information-Service-style XML.
    #[arg(long)]
    xml: bool,
}

/// List information objects.
#[derive(Debug, clap::Args)]
pub struct LsArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Regular expression matched against whole names.
    regex: Option<String>,
    /// Type selection: `T`, `T+` (and subtypes), `!T`, `!T+`.
    #[arg(long = "type")]
    type_selection: Option<String>,
    /// Match either the regex or the type selection instead of both.
    #[arg(long)]
    or: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// List declared types.
#[derive(Debug, clap::Args)]
pub struct TypesArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub async fn set(args: SetArgs) -> anyhow::Result<ExitCode> {
    let (type_name, pairs) = match args.rest.split_first() {
        Some((first, rest)) if !first.contains('=') => (Some(first.as_str()), rest),
        _ => (None, args.rest.as_slice()),
    };
    let attributes = parse_fields(pairs)?;
    let client = args.server.connect("herald-set").await?;
    let object = client
        .set_info(&args.name, type_name, attributes, UpdateMode::Upsert)
        .await?;
    if args.json {
        println!("{}", object_json(&object));
    } else {
        println!("{} version {}", object.name, object.version);
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn get(args: GetArgs) -> anyhow::Result<ExitCode> {
    let client = args.server.connect("herald-get").await?;
    let Some(object) = client.get_info(&args.name).await? else {
        anyhow::bail!("no information object `{}`", args.name);
    };
    if args.json {
        println!("{}", object_json(&object));
    } else if args.xml {
        let types = client.info_types().await?;
        print!("{}", object_xml(&object, &types));
    } else {
        print!("{}", object_text(&object));
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn ls(args: LsArgs) -> anyhow::Result<ExitCode> {
    let selection = SelectionData {
        name_regex: args.regex,
        types: args.type_selection,
        any: args.or,
    };
    let client = args.server.connect("herald-ls").await?;
    let objects = client.list_info(selection).await?;
    if args.json {
        println!("{}", Json::Array(objects.iter().map(object_json).collect()));
        return Ok(ExitCode::SUCCESS);
    }
    for object in &objects {
        println!(
            "{:<40} {:<20} v{:<6} {}",
            object.name,
            object.type_name,
            object.version,
            format_iso8601(object.time)
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn types(args: TypesArgs) -> anyhow::Result<ExitCode> {
    let client = args.server.connect("herald-types").await?;
    let types = client.info_types().await?;
    if args.json {
        println!("{}", Json::Array(types.iter().map(type_json).collect()));
        return Ok(ExitCode::SUCCESS);
    }
    for data in &types {
        let base = data
            .base
            .as_deref()
            .map(|b| format!(" : {b}"))
            .unwrap_or_default();
        println!("{}{base}  {}", data.name, data.description);
        for attribute in &data.attributes {
            println!(
                "    {:<20} {:<16} {}",
                attribute.name, attribute.attr_type, attribute.description
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// An object as JSON.
pub fn object_json(object: &ObjectData) -> Json {
    json!({
        "name": object.name,
        "type": object.type_name,
        "time": format_iso8601(object.time),
        "time_ns": object.time,
        "version": object.version,
        "attributes": Json::Object(json::object(&object.attributes)),
    })
}

fn type_json(data: &TypeData) -> Json {
    json!({
        "name": data.name,
        "base": data.base,
        "description": data.description,
        "attributes": data.attributes.iter().map(|a| json!({
            "name": a.name, "type": a.attr_type, "description": a.description,
        })).collect::<Vec<_>>(),
    })
}

fn object_text(object: &ObjectData) -> String {
    let mut text = format!(
        "{} ({}) version {} at {}\n",
        object.name,
        object.type_name,
        object.version,
        format_iso8601(object.time)
    );
    for (name, value) in &object.attributes {
        text.push_str(&format!("  {name} = {}\n", value.to_text()));
    }
    text
}

/// Renders an object in the Information Service's XML style, with each attribute's type
/// and description from the type (and its bases).
pub fn object_xml(object: &ObjectData, types: &[TypeData]) -> String {
    let describe = |attribute: &str| {
        let mut type_name = Some(object.type_name.as_str());
        while let Some(name) = type_name {
            let Some(data) = types.iter().find(|t| t.name == name) else {
                break;
            };
            if let Some(found) = data.attributes.iter().find(|a| a.name == attribute) {
                return (found.attr_type.clone(), found.description.clone());
            }
            type_name = data.base.as_deref();
        }
        (String::new(), String::new())
    };
    let mut xml = format!(
        "<obj name=\"{}\" type=\"{}\" time=\"{}\">\n",
        escape(&object.name),
        escape(&object.type_name),
        format_iso8601(object.time)
    );
    for (name, value) in &object.attributes {
        let (attr_type, description) = describe(name);
        let values = match value {
            herald_proto::Value::Array(items) => items.iter().map(|v| v.to_text()).collect(),
            other => vec![other.to_text()],
        };
        let values: String = values
            .iter()
            .map(|v| format!("<v>{}</v>", escape(v)))
            .collect();
        xml.push_str(&format!(
            "  <attr name=\"{}\" descr=\"{}\" type=\"{}\">{values}</attr>\n",
            escape(name),
            escape(&description),
            escape(&attr_type)
        ));
    }
    xml.push_str("</obj>\n");
    xml
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use herald_proto::info::AttributeData;
    use herald_proto::Value;

    #[test]
    fn xml_names_types_and_descriptions_from_the_type_chain() {
        let types = vec![
            TypeData {
                name: "Base".into(),
                base: None,
                description: String::new(),
                attributes: vec![AttributeData {
                    name: "ok".into(),
                    attr_type: "bool".into(),
                    description: "all good".into(),
                }],
            },
            TypeData {
                name: "RunInfo".into(),
                base: Some("Base".into()),
                description: String::new(),
                attributes: vec![AttributeData {
                    name: "run".into(),
                    attr_type: "u32".into(),
                    description: "run <number>".into(),
                }],
            },
        ];
        let object = ObjectData {
            name: "RunParams.RunInfo".into(),
            type_name: "RunInfo".into(),
            time: 0,
            version: 1,
            attributes: vec![
                ("ok".into(), Value::Bool(true)),
                ("run".into(), Value::Int(42)),
            ],
        };
        assert_eq!(
            object_xml(&object, &types),
            "<obj name=\"RunParams.RunInfo\" type=\"RunInfo\" time=\"1970-01-01T00:00:00.000Z\">\n  \
             <attr name=\"ok\" descr=\"all good\" type=\"bool\"><v>true</v></attr>\n  \
             <attr name=\"run\" descr=\"run &lt;number&gt;\" type=\"u32\"><v>42</v></attr>\n</obj>\n"
        );
    }
}
