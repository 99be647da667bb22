"""Secrets never leave the machine: redaction before any request is sent."""

from __future__ import annotations

from agentcredit.llm import ModelClient, Redactor, make_provider, user
from tests.llm.fake_server import FakeLLMServer

# Twenty kinds of planted secrets, each as it might appear in an agent's log.
SECRETS = {
    "openai_key": "export OPENAI_API_KEY=sk-proj-4fJ8kLmN0pQrStUvWxYz12345678abcd",
    "anthropic_key": "ANTHROPIC_API_KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123",
    "aws_access_key_id": "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "github_token": "git clone https://x:ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789@github.com/o/r",
    "gitlab_token": "GITLAB_TOKEN=glpat-xYz123AbC456dEf789GhI",
    "slack_token": "token: xoxb-123456789012-abcdefghijkl",
    "stripe_key": "stripe.api_key = 'sk_live_51HxYzAbCdEfGhIjKlMn'",
    "google_api_key": "key=AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "google_oauth_token": "Authorization token ya29.a0AfH6SMBxYzAbCdEfGhIjKlMnOp",
    "huggingface_token": "HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    "npm_token": "//registry.npmjs.org/:_authToken=npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "pypi_token": "password = "
                  "pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMAAC",
    "sendgrid_key": "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",
    "twilio_key": "TWILIO_API_KEY=SK0123456789abcdef0123456789abcdef",
    "private_key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nq9Xh2\n"
                   "-----END RSA PRIVATE KEY-----",
    "jwt": "cookie: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "bearer_token": "curl -H 'Authorization: Bearer 9f8e7d6c5b4a39281706abcdef'",
    "url_password": "DATABASE_URL=postgres://admin:Sup3rS3cret!@db.internal:5432/prod",
    "azure_storage_key": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
                         "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4MTIzNA==;",
    "digitalocean_token": "DO_TOKEN=dop_v1_" + "a1" * 32,
    "password_assignment": "mysql -u root --password=hunter2hunter2",
}
SECRET_VALUES = [
    "sk-proj-4fJ8kLmN0pQrStUvWxYz12345678abcd", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123",
    "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "glpat-xYz123AbC456dEf789GhI",
    "xoxb-123456789012-abcdefghijkl", "sk_live_51HxYzAbCdEfGhIjKlMn",
    "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "ya29.a0AfH6SMBxYzAbCdEfGhIjKlMnOp",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMAAC",
    "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",
    "SK0123456789abcdef0123456789abcdef", "MIIEpAIBAAKCAQEA7",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0", "9f8e7d6c5b4a39281706abcdef",
    "Sup3rS3cret!", "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4", "dop_v1_a1a1a1a1", "hunter2hunter2",
]


def test_every_planted_secret_is_replaced() -> None:
    redactor = Redactor()
    for kind, text in SECRETS.items():
        out = redactor(text)
        assert "[REDACTED:" in out, (kind, out)
    assert len(SECRETS) >= 20 and redactor.total >= len(SECRETS)


def test_no_planted_secret_reaches_the_server() -> None:
    log = "\n".join(f"step {i}: {text}" for i, text in enumerate(SECRETS.values()))
    with FakeLLMServer() as server:
        provider = make_provider("openai/m", base_url=f"{server.url}/v1", api_key="sk-x")
        client = ModelClient(provider)
        client.generate_sync([user("Judge this log:\n" + log)])
        sent = str(server.requests)
    for value in SECRET_VALUES:
        assert value not in sent, value
    assert "Judge this log" in sent and "db.internal:5432/prod" in sent
    assert client.ledger.summary()["redactions"] >= len(SECRETS)


def test_redaction_can_be_switched_off() -> None:
    with FakeLLMServer() as server:
        provider = make_provider("openai/m", base_url=f"{server.url}/v1", api_key="sk-x")
        ModelClient(provider, redact=False).generate_sync([user(SECRETS["openai_key"])])
        assert SECRET_VALUES[0] in str(server.requests)


def test_ordinary_evidence_is_left_alone() -> None:
    text = ("Output: ('Name', 'Sex', 'BodyweightKg')\nExit Code: 0\n"
            "sha256 5f1c1b0fd1a1c0b86e0f6b6b8a4f0a3f2d36f0c9e1f5c0a7a2b8e4c3d1f0a9b8\n"
            "see https://example.com/docs?page=2 and /app/summary.json")
    assert Redactor()(text) == text


def test_the_redactor_remembers_short_clean_texts_not_evidence_views() -> None:
    redact = Redactor()
    system = "You are a careful judge. Answer in JSON."
    views = [f"step {i}: " + "output line without secrets\n" * 800 for i in range(50)]
    assert [redact(v) for v in views] == views and redact(system) == system
    assert system in redact._clean  # asked again in every call: answered unscanned
    assert not any(v in redact._clean for v in views)  # one per trial: not held
