//! Client errors: every JSON-RPC and MCP error code by name, and what can go wrong around
//! a call (timeouts, a lost connection, a capability the server lacks).

use std::time::Duration;

use ferry_protocol::error_codes;
use ferry_protocol::jsonrpc::ErrorObject;

use crate::engine::{CallError, TransportError};

/// Why a client operation failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with an error; [`ClientError::kind`] names its code.
    #[error("{}", rpc_text(.0))]
    Rpc(ErrorObject),
    /// The transport could not get the server's answer (HTTP: unreachable, a status
    /// without a JSON-RPC body, a stream cut before the response...); its message says
    /// what happened on its own, and `status` holds the HTTP status, if any.
    #[error("{0}")]
    Transport(TransportError),
    /// The server did not declare the capability the call needs (checked before sending).
    #[error("the server does not offer {0}")]
    Unsupported(&'static str),
    /// No response in time; the request was cancelled.
    #[error("no response within {0:?}; the request was cancelled")]
    Timeout(Duration),
    /// The connection ended (the server exited or hung up) before the response arrived.
    #[error("connection lost: the server closed the connection before answering")]
    ConnectionLost,
    /// Client and server share no protocol revision.
    #[error("no protocol revision in common (the server speaks {0:?})")]
    NoCommonVersion(Vec<String>),
    /// The call cannot be expressed in the negotiated revision.
    #[error("{0}")]
    NotInRevision(String),
    /// The server's answer did not have the expected shape.
    #[error("the server's answer is invalid: {0}")]
    InvalidResult(String),
    /// The server could not be started (a child process).
    #[error("cannot start the server: {0}")]
    Spawn(String),
    /// The tool answered with an `isError` result (its text), where a typed result was
    /// expected ([`super::Client::call_tool_as`]).
    #[error("the tool failed: {0}")]
    ToolFailed(String),
    /// The server kept asking for input (`input_required`) past the bound.
    #[error("the server still asked for input after {0} rounds")]
    TooManyRounds(u32),
}

/// What an error response's code means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `-32700`.
    ParseError,
    /// `-32600`.
    InvalidRequest,
    /// `-32601`: unknown method, or a capability the server did not advertise.
    MethodNotFound,
    /// `-32602`: bad params, unknown tool or prompt, and from 2026-07-28 a missing resource.
    InvalidParams,
    /// `-32603`.
    InternalError,
    /// `-32002` (until 2025-11-25): resource not found.
    ResourceNotFound,
    /// `-32042` (2025-11-25): URL elicitation required.
    UrlElicitationRequired,
    /// `-32020` (2026-07-28): an HTTP header disagrees with the body.
    HeaderMismatch,
    /// `-32021` (2026-07-28): the request needs a client capability that was not declared.
    MissingClientCapability,
    /// `-32022` (2026-07-28): unsupported protocol version; `data.supported` lists them.
    UnsupportedProtocolVersion,
    /// `-32800`: request cancelled (not MCP; some peers send it).
    Cancelled,
    /// Any other code: the server's own.
    Application(i64),
}

impl ErrorKind {
    /// The kind of `code`.
    pub fn of(code: i64) -> ErrorKind {
        match code {
            error_codes::PARSE_ERROR => ErrorKind::ParseError,
            error_codes::INVALID_REQUEST => ErrorKind::InvalidRequest,
            error_codes::METHOD_NOT_FOUND => ErrorKind::MethodNotFound,
            error_codes::INVALID_PARAMS => ErrorKind::InvalidParams,
            error_codes::INTERNAL_ERROR => ErrorKind::InternalError,
            error_codes::RESOURCE_NOT_FOUND_LEGACY => ErrorKind::ResourceNotFound,
            error_codes::URL_ELICITATION_REQUIRED => ErrorKind::UrlElicitationRequired,
            error_codes::HEADER_MISMATCH => ErrorKind::HeaderMismatch,
            error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY => ErrorKind::MissingClientCapability,
            error_codes::UNSUPPORTED_PROTOCOL_VERSION => ErrorKind::UnsupportedProtocolVersion,
            error_codes::REQUEST_CANCELLED => ErrorKind::Cancelled,
            other => ErrorKind::Application(other),
        }
    }
}

fn kind_name(code: i64) -> &'static str {
    error_codes::name(code).unwrap_or("application error")
}

fn rpc_text(error: &ErrorObject) -> String {
    format!(
        "the server answered error {} ({}): {}",
        error.code,
        kind_name(error.code),
        error.message
    )
}

impl ClientError {
    /// The kind of an error response (`None` for errors that are not responses).
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            ClientError::Rpc(error) => Some(ErrorKind::of(error.code)),
            _ => None,
        }
    }

    /// Whether the transport, not the server, produced this error: the server's answer
    /// could not be had (HTTP: unreachable, refused with a status and no JSON-RPC body, a
    /// stream cut before the response...). [`ClientError::transport`] has the details.
    pub fn is_transport(&self) -> bool {
        matches!(self, ClientError::Transport(_))
    }

    /// The transport's failure, if the server's answer could not be had.
    pub fn transport(&self) -> Option<&TransportError> {
        match self {
            ClientError::Transport(error) => Some(error),
            _ => None,
        }
    }

    /// The error response, if the server sent one.
    pub fn rpc(&self) -> Option<&ErrorObject> {
        match self {
            ClientError::Rpc(error) => Some(error),
            _ => None,
        }
    }
}

impl From<CallError> for ClientError {
    fn from(error: CallError) -> Self {
        match error {
            CallError::Rpc(error) => ClientError::Rpc(error),
            CallError::Timeout(after) => ClientError::Timeout(after),
            CallError::ConnectionClosed => ClientError::ConnectionLost,
            CallError::InvalidResult(message) => ClientError::InvalidResult(message),
            CallError::Serialize(message) => ClientError::NotInRevision(message),
            CallError::Transport(error) => ClientError::Transport(error),
        }
    }
}
