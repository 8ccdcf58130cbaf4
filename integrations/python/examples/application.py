"""An application's own code, as a team ships it: it builds its OpenAI client from the
environment (OPENAI_BASE_URL, OPENAI_API_KEY) and knows nothing of squall."""
from openai import OpenAI


def summarize(text):
    client = OpenAI()
    events = client.responses.create(model="gpt-4o-mini", input=f"Summarize: {text}", stream=True)
    return "".join(e.delta for e in events if e.type == "response.output_text.delta")
