//! The server as the [`Backend`] of a transport that opens many connections (the HTTP
//! server): the one place such a transport meets the server.

use ferry_protocol::VersionSet;
use ferry_protocol::types::JsonObject;

use tokio::sync::broadcast;

use super::registry::Change;
use super::{Server, session};
use crate::engine::{Backend, BackendChange, Connection, SessionShare, Transport};

impl Server {
    /// Serve one connection of a transport, its tasks kept in `tasks` too if given. The
    /// engine's task ends by itself once the transport's input closes.
    fn connection(
        &self,
        connection: Connection,
        transport: Transport,
        share: Option<SessionShare>,
    ) {
        match connection {
            Connection::Stateless => session::serve_request(self.clone(), transport),
            Connection::Session | Connection::Legacy => {
                drop(session::serve(self.clone(), transport, share));
            }
        }
    }
}

impl Backend for Server {
    fn connect(&self, connection: Connection, transport: Transport) {
        self.connection(connection, transport, None);
    }

    fn connect_shared(&self, connection: Connection, transport: Transport, share: SessionShare) {
        self.connection(connection, transport, Some(share));
    }

    fn versions(&self) -> &VersionSet {
        Server::versions(self)
    }

    fn with_input_schema(&self, tool: &str, check: &mut dyn FnMut(Option<&JsonObject>)) {
        // Looked at in a snapshot, not cloned: a schema can be large.
        let tools = self.tools().snapshot();
        check(tools.entries.get(tool).map(|e| &e.tool().input_schema));
    }

    fn write_queue(&self) -> usize {
        self.engine_config().write_queue
    }

    fn changes(&self) -> Option<broadcast::Receiver<BackendChange>> {
        Some(self.outbound_changes())
    }

    fn changed_elsewhere(&self, change: BackendChange) {
        let change = match change {
            BackendChange::Tools => Change::Tools,
            BackendChange::Resources => Change::Resources,
            BackendChange::Prompts => Change::Prompts,
            BackendChange::ResourceUpdated(uri) => Change::ResourceUpdated(uri.into()),
            BackendChange::Message { topic, payload } => {
                self.instance_message(&topic, &payload);
                return;
            }
        };
        self.changed_here(change);
    }
}

impl From<Change> for BackendChange {
    fn from(change: Change) -> Self {
        match change {
            Change::Tools => BackendChange::Tools,
            Change::Resources => BackendChange::Resources,
            Change::Prompts => BackendChange::Prompts,
            Change::ResourceUpdated(uri) => BackendChange::ResourceUpdated(uri.to_string()),
        }
    }
}
