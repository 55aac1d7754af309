//! Information objects from the client: declare types, create/update/delete objects, get
//! and list them, and subscribe to them (their current values, then every change).

use herald_proto::info::{InfoReply, InfoRequest, ObjectData, SelectionData, TypeData, UpdateMode};
use herald_proto::time::now_nanos;
use herald_proto::value::Field;
use herald_proto::{Frame, Kind};

use crate::client::Client;
use crate::connection::Restore;
use crate::error::ClientError;
use crate::{Delivered, Subscription};

/// A change of an information object, as an info subscription delivers it.
#[derive(Debug, Clone, PartialEq)]
pub struct InfoChange {
    /// Why: `snapshot` (its value when the subscription started), `created`, `updated` or
    /// `deleted`.
    pub reason: String,
    /// The object after the change (for `deleted`, as it was, with its version advanced).
    pub object: ObjectData,
}

impl InfoChange {
    /// Reads a change from a delivered record of kind `info`; `None` for other records.
    pub fn from_delivered(delivered: &Delivered) -> Option<InfoChange> {
        if delivered.kind() != Kind::Info {
            return None;
        }
        let record = delivered.record();
        Some(InfoChange {
            reason: record.text.clone(),
            object: ObjectData {
                name: record.subject.clone(),
                type_name: record.type_name.clone(),
                time: record.time,
                version: record.id.unwrap_or(0),
                attributes: record.fields.clone(),
            },
        })
    }
}

impl Client {
    async fn info(&self, request: InfoRequest) -> Result<InfoReply, ClientError> {
        let answer = self
            .handle
            .control(|cid| Frame::Info {
                cid,
                request: request.clone(),
            })
            .await?;
        match answer {
            Frame::InfoReply { reply, .. } => Ok(reply),
            other => Err(ClientError::Closed(format!(
                "unexpected {} frame in answer",
                other.frame_type().name()
            ))),
        }
    }

    /// Declares a type (declaring the same type again is fine).
    ///
    /// # Errors
    /// [`ClientError::Server`] with code `bad_info` naming what is wrong (unknown base,
    /// unknown attribute type, a conflicting earlier declaration), or the connection's error.
    pub async fn declare_type(&self, data: TypeData) -> Result<(), ClientError> {
        self.info(InfoRequest::Declare(data)).await.map(|_| ())
    }

    /// Creates or changes object `name` (`mode`: create, update or either), stamped now;
    /// returns it after the change, with its new version.
    ///
    /// # Errors
    /// [`ClientError::Server`] (`bad_info`): unknown type, attribute of the wrong type,
    /// malformed name, an object that exists (create) or not (update); the store is then
    /// unchanged.
    pub async fn set_info(
        &self,
        name: &str,
        type_name: Option<&str>,
        attributes: Vec<Field>,
        mode: UpdateMode,
    ) -> Result<ObjectData, ClientError> {
        let request = InfoRequest::Update {
            mode,
            name: name.to_string(),
            type_name: type_name.map(str::to_string),
            time: now_nanos(),
            attributes,
        };
        let reply = self.info(request).await?;
        first_object(reply)
    }

    /// Deletes object `name`; returns it as it was.
    ///
    /// # Errors
    /// [`ClientError::Server`] (`bad_info`) if there is no such object.
    pub async fn delete_info(&self, name: &str) -> Result<ObjectData, ClientError> {
        let reply = self
            .info(InfoRequest::Delete {
                name: name.to_string(),
                time: now_nanos(),
            })
            .await?;
        first_object(reply)
    }

    /// Returns object `name`, or `None`.
    ///
    /// # Errors
    /// The connection's error.
    pub async fn get_info(&self, name: &str) -> Result<Option<ObjectData>, ClientError> {
        Ok(self.get_infos(&[name]).await?.pop().flatten())
    }

    /// Returns the objects `names`, all as they were at one instant (`None` where there is
    /// no such object).
    ///
    /// # Errors
    /// The connection's error.
    pub async fn get_infos(&self, names: &[&str]) -> Result<Vec<Option<ObjectData>>, ClientError> {
        let request = InfoRequest::Get(names.iter().map(|n| n.to_string()).collect());
        Ok(self.info(request).await?.objects)
    }

    /// Returns every object the selection matches, by name.
    ///
    /// # Errors
    /// [`ClientError::Server`] (`bad_info`) for a bad regular expression or type selection.
    pub async fn list_info(
        &self,
        selection: SelectionData,
    ) -> Result<Vec<ObjectData>, ClientError> {
        Ok(self
            .info(InfoRequest::List(selection))
            .await?
            .objects
            .into_iter()
            .flatten()
            .collect())
    }

    /// Returns every declared type.
    ///
    /// # Errors
    /// The connection's error.
    pub async fn info_types(&self) -> Result<Vec<TypeData>, ClientError> {
        Ok(self.info(InfoRequest::Types).await?.types)
    }

    /// Subscribes to the objects a selection matches: first the current value of each
    /// (reason `snapshot`), then every change — none lost or repeated between the two.
    /// Read the records with [`InfoChange::from_delivered`].
    ///
    /// # Errors
    /// [`ClientError::Server`] (`bad_info`) for a bad selection, or as
    /// [`Client::subscribe`].
    pub async fn subscribe_info(
        &self,
        selection: SelectionData,
    ) -> Result<Subscription, ClientError> {
        self.subscribe_to(Restore::Info(selection)).await
    }
}

fn first_object(reply: InfoReply) -> Result<ObjectData, ClientError> {
    reply
        .objects
        .into_iter()
        .flatten()
        .next()
        .ok_or_else(|| ClientError::Closed("the server answered without the object".to_string()))
}
