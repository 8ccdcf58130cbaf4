"""One streamed OpenAI Responses call over http.client, and what can go wrong with it.

A call returns the assistant text and the tool calls of a completed response, or raises a
ProviderError that says what happened on the wire and what the attempt had already seen
(text shown to the user, a tool call started) -- the retry loop needs both.
"""

import http.client
import json
import socket
import urllib.parse

import bugs


class ProviderError(Exception):
    """A failed attempt. `kind` is one of: status, timeout, eof, reset, truncated, protocol,
    stream_error, connect."""

    def __init__(self, kind, message, status=None, headers=None, code=None):
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.headers = {k.lower(): v for k, v in (headers or {}).items()}
        self.code = code
        self.saw_text = False
        self.saw_tool_call = False


class Reply:
    """What a completed response carried."""

    def __init__(self):
        self.text = ""
        self.tool_calls = []  # [{"call_id", "name", "arguments"}]


def post_stream(base_url, api_key, body, headers, timeout_s, on_text=None):
    """POST {base_url}/responses with stream: true; return a Reply or raise ProviderError.

    `timeout_s` bounds the wait for the response headers and every gap between reads.
    `on_text(delta)` is called for each text delta as it arrives.
    """
    url = urllib.parse.urlsplit(base_url.rstrip("/") + "/responses")
    connection = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=timeout_s)
    payload = json.dumps(body).encode()
    request_headers = {"content-type": "application/json", "authorization": f"Bearer {api_key}", "accept": "text/event-stream"}
    request_headers.update(headers)
    reply = Reply()
    seen = {"text": False, "tool": False}
    try:
        try:
            connection.request("POST", url.path, body=payload, headers=request_headers)
            response = connection.getresponse()
        except (socket.timeout, TimeoutError) as error:
            raise ProviderError("timeout", f"no response headers within {timeout_s:.3f} s") from error
        except ConnectionResetError as error:
            raise ProviderError("reset", f"connection reset before the response: {error}") from error
        except OSError as error:
            raise ProviderError("connect", f"cannot reach the provider: {error}") from error
        if response.status != 200:
            raw = response.read()
            code, message = _error_fields(raw)
            raise ProviderError("status", f"HTTP {response.status}: {message}", response.status, dict(response.getheaders()), code)
        _read_events(response, reply, seen, on_text)
        return reply
    except ProviderError as error:
        error.saw_text, error.saw_tool_call = seen["text"], seen["tool"]
        raise
    finally:
        connection.close()


def _error_fields(raw):
    try:
        error = json.loads(raw)["error"]
        return error.get("code"), error.get("message") or ""
    except (ValueError, KeyError, TypeError):
        return None, raw[:200].decode("utf-8", "replace")


def _read_events(response, reply, seen, on_text):
    calls = {}
    event = None
    completed = False
    while True:
        try:
            line = response.readline()
        except (socket.timeout, TimeoutError) as error:
            raise ProviderError("timeout", "the stream went silent past the idle timeout") from error
        except http.client.IncompleteRead as error:
            raise ProviderError("eof", f"the stream ended mid-body (EOF): {error!r}") from error
        except ConnectionResetError as error:
            raise ProviderError("reset", f"the connection was reset mid-stream: {error}") from error
        except (http.client.HTTPException, OSError) as error:
            raise ProviderError("eof", f"the stream broke: {error!r}") from error
        if not line:
            break
        text = line.decode("utf-8", "replace").rstrip("\r\n")
        if text.startswith("event:"):
            event = text[6:].strip()
            continue
        if not text or text.startswith(":"):
            continue
        if not text.startswith("data:"):
            raise ProviderError("protocol", f"not an event stream: {text[:60]!r}")
        data = text[5:].strip()
        if data == "[DONE]":
            continue
        try:
            payload = json.loads(data)
        except ValueError as error:
            raise ProviderError("protocol", f"event data is not JSON: {data[:60]!r}") from error
        kind = payload.get("type") or event
        if kind == "response.output_text.delta":
            seen["text"] = True
            reply.text += payload.get("delta", "")
            if on_text:
                on_text(payload.get("delta", ""))
        elif kind == "response.output_item.added" and payload.get("item", {}).get("type") == "function_call":
            seen["tool"] = True
            item = payload["item"]
            calls[item.get("id")] = {"call_id": item.get("call_id"), "name": item.get("name"), "arguments": ""}
        elif kind == "response.function_call_arguments.delta":
            call = calls.get(payload.get("item_id"))
            if call is not None:
                call["arguments"] += payload.get("delta", "")
        elif kind == "response.output_item.done" and payload.get("item", {}).get("type") == "function_call":
            item = payload["item"]
            calls.setdefault(item.get("id"), {"call_id": item.get("call_id"), "name": item.get("name")})["arguments"] = item.get("arguments", "")
        elif kind in ("response.failed", "error"):
            error = (payload.get("response") or {}).get("error") or payload.get("error") or payload
            raise ProviderError("stream_error", error.get("message") or "the response failed", code=error.get("code"))
        elif kind == "response.completed":
            completed = True
    if not completed and not bugs.on("truncation-is-success"):
        raise ProviderError("truncated", "the stream ended without response.completed")
    reply.tool_calls = list(calls.values())
