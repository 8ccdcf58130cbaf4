"""The application's own code judged case by case, with no callback: inside `serving()` the
OpenAI SDK's variables name the case's run and pytest's clock runs at the case's rate. The
calibration runs first as tests of their own (`calibrate="tests"`): the application's own time
per retry, taken out of every wait that timed checks judge."""
import pytest

from application import summarize


@pytest.mark.squall(profile="prd-0006", level="wire", calibrate="tests")
def test_the_application_is_resilient(squall_case):
    with squall_case.serving():
        summarize("how LLM clients retry provider failures")
    squall_case.assert_resilient()
