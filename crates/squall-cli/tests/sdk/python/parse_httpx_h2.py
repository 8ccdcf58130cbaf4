"""Drive httpx with http2=True (h2 under httpcore) against squall over TLS, trusting squall's
test CA (SQUALL_CA_FILE), and check how it takes each HTTP/2 fault: the protocol ALPN chose,
a whole stream, RST_STREAM INTERNAL_ERROR raised, an early END_STREAM a silent success with the
events so far (the client must notice the missing terminal event itself), a graceful GOAWAY a
whole reply, a GOAWAY with a code raised, the connection closed with no GOAWAY raised ("Server
disconnected"), REFUSED_STREAM before the head raised.
Usage: python parse_httpx_h2.py  (reads SQUALL_RUNS: a JSON object of case name -> base URL)"""

import json
import os

import httpx
from checker_kit import expect, run_cases

runs = json.loads(os.environ["SQUALL_RUNS"])
ca = os.environ["SQUALL_CA_FILE"]
request = {"model": "m", "input": "hi", "stream": True}


def events(name):
    """The HTTP version and the event names of the case's stream, read to its end."""
    with httpx.Client(http2=True, verify=ca) as client:
        with client.stream("POST", f"{runs[name]}/responses", json=request) as reply:
            names = [line[len("event: "):] for line in reply.iter_lines() if line.startswith("event: ")]
            return reply.http_version, names


def raises(name):
    """The error reading the case's stream raised."""
    try:
        events(name)
    except httpx.HTTPError as error:
        return error
    raise AssertionError("no error")


def whole_stream():
    version, names = events("text")
    expect(version == "HTTP/2", f"ALPN chose {version}")
    expect(names[-1] == "response.completed", names)


def a_reset_is_raised_with_its_code():
    error = raises("reset")
    expect(isinstance(error, httpx.RemoteProtocolError) and "error_code:2" in str(error), repr(error))


def an_early_end_stream_is_a_silent_success():
    version, names = events("eof")
    expect(version == "HTTP/2" and len(names) == 3 and "response.completed" not in names, names)


def a_graceful_goaway_lets_the_reply_end():
    _, names = events("goaway")
    expect(names[-1] == "response.completed", names)


def a_goaway_with_a_code_is_raised():
    error = raises("goaway_cut")
    expect("ConnectionTerminated" in str(error) and "error_code:2" in str(error), repr(error))


def a_connection_closed_with_no_goaway_is_raised():
    error = raises("closed")
    expect(isinstance(error, httpx.RemoteProtocolError) and "disconnected" in str(error), repr(error))


def a_refused_stream_is_raised():
    error = raises("refused")
    expect(isinstance(error, httpx.RemoteProtocolError) and "error_code:7" in str(error), repr(error))


run_cases(
    "httpx (http2=True) over TLS",
    [
        whole_stream,
        a_reset_is_raised_with_its_code,
        an_early_end_stream_is_a_silent_success,
        a_graceful_goaway_lets_the_reply_end,
        a_goaway_with_a_code_is_raised,
        a_connection_closed_with_no_goaway_is_raised,
        a_refused_stream_is_raised,
    ],
)
