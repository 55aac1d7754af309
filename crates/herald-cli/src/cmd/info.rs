//! `herald set`, `get`, `ls`, `types`: information objects from the command line.

use std::process::ExitCode;

use herald_info::json::{object_json, type_json};
use herald_info::xml::object_xml;
use herald_info::TypeRegistry;
use herald_proto::info::{AttributeData, ObjectData, SelectionData, TypeData, UpdateMode};
use herald_proto::time::format_iso8601;
use serde_json::Value as Json;

use super::{parse_fields, ServerArgs};

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

/// Declare an information type.
#[derive(Debug, clap::Args)]
pub struct DeclareArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// The type's name.
    name: String,
    /// Attributes as `name:type` or `name:type:description`, e.g. `run:u32:run number`.
    attributes: Vec<String>,
    /// Base type, whose attributes come first.
    #[arg(long)]
    base: Option<String>,
    /// What the type is, for people.
    #[arg(long, default_value = "")]
    description: String,
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
        let registry = TypeRegistry::from_data(client.info_types().await?)?;
        print!("{}", object_xml(&object, &registry));
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

pub async fn declare(args: DeclareArgs) -> anyhow::Result<ExitCode> {
    let mut attributes = Vec::new();
    for text in &args.attributes {
        let mut parts = text.splitn(3, ':');
        let (Some(name), Some(attr_type)) = (parts.next(), parts.next()) else {
            anyhow::bail!("bad attribute `{text}` (expected name:type or name:type:description)");
        };
        attributes.push(AttributeData {
            name: name.to_string(),
            attr_type: attr_type.to_string(),
            description: parts.next().unwrap_or_default().to_string(),
        });
    }
    let data = TypeData {
        name: args.name,
        base: args.base,
        description: args.description,
        attributes,
    };
    let client = args.server.connect("herald-declare").await?;
    client.declare_type(data.clone()).await?;
    println!("declared {}", data.name);
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
