"""RFC 9114 §4.1: the sequence of frames on a request stream or a push stream, as a table.

An HTTP message on a stream is: one HEADERS frame (the header section), any number of DATA
frames (the content), optionally one more HEADERS frame (the trailer section), then the end
of the stream. Before a final response a server may send interim (1xx) responses, each a
HEADERS frame of its own (RFC 9114 §4.1, RFC 9110 §15.2). Unknown and reserved frame types
may appear anywhere and are ignored (RFC 9114 §9); they never reach this table.

The receiving side of every request and push stream moves through these states:

                     HEADERS (interim 1xx, responses only)
                        +------+
                        |      v
    +-----------------------------+  HEADERS   +-------------+  HEADERS   +-----------+
    | EXPECTING_HEADERS           |----------->| RECEIVING_  |----------->| TRAILERS_ |
    +-----------------------------+            | CONTENT     |            | RECEIVED  |
        |                                      +-------------+            +-----------+
        | end of stream                          |  ^   | DATA                  |
        v                                        |  +---+                       |
    stream error: H3_REQUEST_INCOMPLETE          | end of stream                | end
    (a request), H3_MESSAGE_ERROR (a response)   |                              |
                                                 v                              v
                                              +------------------------------------+
                                              | COMPLETE                           |
                                              +------------------------------------+

Any (state, input) pair missing from `TRANSITIONS` is an invalid sequence of frames, which
RFC 9114 §4.1 makes a connection error of type H3_FRAME_UNEXPECTED (a DATA frame before any
HEADERS, or anything after the trailers). Ending the stream before the header section is
complete is the stream error H3_REQUEST_INCOMPLETE when the stream carries a request (§4.1
asks the server to abort with it). §8.1 defines that code for an unfinished request only, so
a response stream that ends before its final response is instead malformed (§4.1.2): the
stream error H3_MESSAGE_ERROR.
PUSH_PROMISE frames may arrive on a request stream at any point before it is complete
(§4.1) and do not change its state; on a push stream they are forbidden (§4.1).
"""

from __future__ import annotations

from enum import Enum

from h3learn.h3.errors import ErrorCode, H3ConnectionError, H3StreamError


class MessageState(Enum):
    EXPECTING_HEADERS = "expecting_headers"
    RECEIVING_CONTENT = "receiving_content"
    TRAILERS_RECEIVED = "trailers_received"
    COMPLETE = "complete"


class MessageInput(Enum):
    INTERIM_HEADERS = "interim_headers"  # a 1xx response's header section
    HEADERS = "headers"  # a request's or a final response's header section, or trailers
    DATA = "data"
    PUSH_PROMISE = "push_promise"
    END_OF_STREAM = "end_of_stream"


S = MessageState
I = MessageInput  # noqa: E741 (a one-letter alias keeps the table below readable)

#: (state, input) -> next state. Everything not listed breaks RFC 9114 §4.1.
TRANSITIONS: dict[tuple[MessageState, MessageInput], MessageState] = {
    (S.EXPECTING_HEADERS, I.INTERIM_HEADERS): S.EXPECTING_HEADERS,
    (S.EXPECTING_HEADERS, I.HEADERS): S.RECEIVING_CONTENT,
    (S.EXPECTING_HEADERS, I.PUSH_PROMISE): S.EXPECTING_HEADERS,
    (S.RECEIVING_CONTENT, I.DATA): S.RECEIVING_CONTENT,
    (S.RECEIVING_CONTENT, I.HEADERS): S.TRAILERS_RECEIVED,
    (S.RECEIVING_CONTENT, I.PUSH_PROMISE): S.RECEIVING_CONTENT,
    (S.RECEIVING_CONTENT, I.END_OF_STREAM): S.COMPLETE,
    (S.TRAILERS_RECEIVED, I.PUSH_PROMISE): S.TRAILERS_RECEIVED,
    (S.TRAILERS_RECEIVED, I.END_OF_STREAM): S.COMPLETE,
}

#: Why a missing pair is wrong, for the error message.
_EXPLANATIONS: dict[tuple[MessageState, MessageInput], str] = {
    (S.EXPECTING_HEADERS, I.DATA): "DATA frame before the HEADERS frame",
    (S.TRAILERS_RECEIVED, I.DATA): "DATA frame after the trailer section",
    (S.TRAILERS_RECEIVED, I.HEADERS): "HEADERS frame after the trailer section",
}


class MessageExchange:
    """The receiving side of one request or push stream, driven by `TRANSITIONS`."""

    def __init__(
        self, stream_id: int, is_push: bool = False, receives_request: bool = False
    ) -> None:
        self.stream_id = stream_id
        self.is_push = is_push
        #: True on a server's request stream; False where a response arrives.
        self.receives_request = receives_request and not is_push
        self.state = MessageState.EXPECTING_HEADERS
        #: An interim (1xx) response has arrived: the table's state stays put, but an error
        #: message can then say which HEADERS frame was missing.
        self.interim_received = False

    def check_headers_frame(self) -> None:
        """Raise the RFC's error now if no HEADERS frame may come in the current state.

        Whether a HEADERS frame is an interim response, a final one or trailers is known
        only once its field section is decoded; but after the trailer section no HEADERS
        frame of any kind may follow (RFC 9114 §4.1), so that is checked first, before its
        contents can raise a different error.
        """
        if not any((self.state, kind) in TRANSITIONS for kind in (I.INTERIM_HEADERS, I.HEADERS)):
            self.receive(MessageInput.HEADERS)

    def receive(self, event: MessageInput) -> tuple[MessageState, MessageState]:
        """Apply one input; returns (old state, new state) or raises the RFC's error."""
        old = self.state
        if event is MessageInput.PUSH_PROMISE and self.is_push:
            raise H3ConnectionError(
                ErrorCode.H3_FRAME_UNEXPECTED,
                f"PUSH_PROMISE frame on push stream {self.stream_id}",
                "9114#4.1",
            )
        if old is MessageState.EXPECTING_HEADERS and event is MessageInput.END_OF_STREAM:
            if self.receives_request:
                raise H3StreamError(
                    ErrorCode.H3_REQUEST_INCOMPLETE,
                    f"stream {self.stream_id} ended before a complete header section",
                    "9114#4.1",
                    stream_id=self.stream_id,
                )
            raise H3StreamError(
                ErrorCode.H3_MESSAGE_ERROR,
                f"stream {self.stream_id} ended without a final response",
                "9114#4.1.2",
                stream_id=self.stream_id,
            )
        new = TRANSITIONS.get((old, event))
        if new is None:
            what = _EXPLANATIONS.get((old, event), f"{event.value} in state {old.value}")
            if (old, event) == (S.EXPECTING_HEADERS, I.DATA) and self.interim_received:
                what = "DATA frame after an interim (1xx) response, before the final response"
            raise H3ConnectionError(
                ErrorCode.H3_FRAME_UNEXPECTED,
                f"{what} on stream {self.stream_id}",
                "9114#4.1",
            )
        self.state = new
        self.interim_received |= event is MessageInput.INTERIM_HEADERS
        return old, new
