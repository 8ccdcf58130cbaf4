"""The official openai Python SDK, with its default retry settings, judged case by case.

pytest runs on squall's clock, so the SDK is called as shipped: no patch, no scaled timeout."""
import pytest
from openai import OpenAI


def stream_once(case):
    retries = {} if case.max_retries is None else {"max_retries": case.max_retries}
    client = OpenAI(base_url=case.base_url, api_key="test", **retries)
    try:
        events = client.responses.create(model="gpt-4o-mini", input=case.prompt, stream=True)
        text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
        return {"ok": True, "stop_reason": "end_turn", "final_text": text}
    except Exception as error:  # what a caller of the SDK sees
        return {"ok": False, "stop_reason": "error", "error_type": type(error).__name__, "error_message": str(error)}


@pytest.mark.squall(profile="prd-0006", level="wire")
def test_openai_sdk_meets_prd_0006(squall_case):
    squall_case.verify(stream_once)
