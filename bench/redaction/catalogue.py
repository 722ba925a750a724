"""The redaction bench's development set: the credential shapes of public secret scanners' rule sets, in the
contexts coding sessions hold them, and look-alikes that must stay.

Facts only (prefixes, alphabets, lengths) from gitleaks' ``config/gitleaks.toml`` (the rule ids are named in
``source``) and detect-secrets' plugins; none of their code. Rules for secrets that do not appear in coding
sessions are left out (a PKCS#12 file is binary; a Sidekiq Enterprise gem URL, a 42 School client secret …
are kept: they are one line in a shell or a config, where a session shows them). Values are random (seeded), so
the set is the same at every run; every context is hand-written.

``heldout.jsonl`` (written before this file and the rules, ``make_heldout.py``) is the held-out set: its shapes
and contexts were not looked at while the rules were tuned.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
HELDOUT = HERE / "heldout.jsonl"

AZ, DIG = string.ascii_letters, string.digits
ALNUM = AZ + DIG
LOWER_ALNUM = string.ascii_lowercase + DIG
UPPER_ALNUM = string.ascii_uppercase + DIG
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


class Example(NamedTuple):
    """One text. ``secrets``: the substrings that must not survive redaction (empty: the text must stay as it is)."""

    shape: str
    text: str
    secrets: tuple[str, ...]
    source: str


class _Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def s(self, n: int, alphabet: str = ALNUM) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.r.getrandbits(128), version=4))

    def num(self, digits: int) -> str:
        return str(self.r.randint(10 ** (digits - 1), 10**digits - 1))


# -- provider keys with a prefix of their own: (gitleaks rule, value) ----------------------------------------


def _prefixed(g: _Gen) -> list[tuple[str, str]]:
    s, n = g.s, g.num
    return [
        (
            "1password-secret-key",
            f"A3-{s(6, UPPER_ALNUM)}-{s(11, UPPER_ALNUM)}-{s(5, UPPER_ALNUM)}-{s(5, UPPER_ALNUM)}-{s(5, UPPER_ALNUM)}",
        ),
        ("1password-service-account-token", "ops_eyJ" + s(260, B64)),
        ("adobe-client-secret", "p8e-" + s(32, LOWER_ALNUM)),
        ("age-secret-key", "AGE-SECRET-KEY-1" + s(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")),
        ("airtable-personnal-access-token", "pat" + s(14) + "." + s(64, HEX)),
        ("alibaba-access-key-id", "LTAI" + s(20, LOWER_ALNUM)),
        ("anthropic-api-key", "sk-ant-api03-" + s(93, URLSAFE) + "AA"),
        ("anthropic-admin-api-key", "sk-ant-admin01-" + s(93, URLSAFE) + "AA"),
        ("artifactory-api-key", "AKCp" + s(69)),
        ("artifactory-reference-token", "cmVmd" + s(59)),
        ("aws-access-token", "AKIA" + s(16, string.ascii_uppercase + "234567")),
        ("aws-access-token/asia", "ASIA" + s(16, string.ascii_uppercase + "234567")),
        ("aws-amazon-bedrock-api-key-long-lived", "ABSK" + s(140, B64)),
        ("azure-ad-client-secret", s(3) + "8Q~" + s(34, ALNUM + "_~.-")),
        ("clickhouse-cloud-api-secret-key", "4b1d" + s(38)),
        ("clojars-api-token", "CLOJARS_" + s(60, LOWER_ALNUM)),
        ("cloudflare-origin-ca-key", "v1.0-" + s(24, HEX) + "-" + s(146, HEX)),
        ("databricks-api-token", "dapi" + s(32, HEX)),
        ("digitalocean-access-token", "doo_v1_" + s(64, HEX)),
        ("digitalocean-pat", "dop_v1_" + s(64, HEX)),
        ("digitalocean-refresh-token", "dor_v1_" + s(64, HEX)),
        ("doppler-api-token", "dp.pt." + s(43, LOWER_ALNUM)),
        ("duffel-api-token", "duffel_live_" + s(43, URLSAFE)),
        ("dynatrace-api-token", "dt0c01." + s(24, UPPER_ALNUM) + "." + s(64, UPPER_ALNUM)),
        ("easypost-api-token", "EZAK" + s(54, LOWER_ALNUM)),
        ("facebook-page-access-token", "EAAC" + s(120)),
        ("flutterwave-secret-key", "FLWSECK_TEST-" + s(32, "abcdefgh0123456789") + "-X"),
        ("flyio-access-token", "fo1_" + s(43, URLSAFE)),
        ("flyio-access-token/fm2", "fm2_" + s(120, B64)),
        ("frameio-api-token", "fio-u-" + s(64, URLSAFE)),
        ("gcp-api-key", "AIza" + s(35, URLSAFE)),
        ("github-pat", "ghp_" + s(36)),
        ("github-oauth", "gho_" + s(36)),
        ("github-app-token", "ghs_" + s(36)),
        ("github-app-token/user", "ghu_" + s(36)),
        ("github-refresh-token", "ghr_" + s(36)),
        ("github-fine-grained-pat", "github_pat_" + s(22) + "_" + s(59)),
        ("gitlab-pat", "glpat-" + s(20, URLSAFE)),
        ("gitlab-pat-routable", "glpat-" + s(40, URLSAFE) + "." + s(2, LOWER_ALNUM) + s(7, LOWER_ALNUM)),
        ("gitlab-ptt", "glptt-" + s(40, HEX)),
        ("gitlab-deploy-token", "gldt-" + s(20, URLSAFE)),
        ("gitlab-runner-authentication-token", "glrt-" + s(20, URLSAFE)),
        ("gitlab-rrt", "GR1348941" + s(20, URLSAFE)),
        ("gitlab-cicd-job-token", "glcbt-" + s(3) + "_" + s(20, URLSAFE)),
        ("gitlab-feed-token", "glft-" + s(20, URLSAFE)),
        ("gitlab-incoming-mail-token", "glimt-" + s(25, URLSAFE)),
        ("gitlab-kubernetes-agent-token", "glagent-" + s(50, URLSAFE)),
        ("gitlab-oauth-app-secret", "gloas-" + s(64, URLSAFE)),
        ("gitlab-scim-token", "glsoat-" + s(20, URLSAFE)),
        ("gitlab-feature-flag-client-token", "glffct-" + s(20, URLSAFE)),
        ("grafana-api-key", "eyJrIjoi" + s(90)),
        ("grafana-cloud-api-token", "glc_" + s(120, B64)),
        ("grafana-service-account-token", "glsa_" + s(32) + "_" + s(8, HEX)),
        ("harness-api-key", "pat." + s(22, URLSAFE) + "." + s(24) + "." + s(20)),
        ("hashicorp-tf-api-token", s(14, LOWER_ALNUM) + ".atlasv1." + s(67, URLSAFE)),
        ("heroku-api-key-v2", "HRKU-AA" + s(58, URLSAFE)),
        ("huggingface-access-token", "hf_" + s(34, AZ)),
        ("huggingface-organization-api-token", "api_org_" + s(34, AZ)),
        ("infracost-api-token", "ico-" + s(32)),
        ("intra42-client-secret", "s-s4t2ud-" + s(64, HEX)),
        ("jwt", "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiI" + s(40, URLSAFE) + "." + s(43, URLSAFE)),
        ("linear-api-key", "lin_api_" + s(40)),
        ("maxmind-license-key", s(6) + "_" + s(29) + "_mmk"),
        ("notion-api-token", "ntn_" + n(11) + s(35)),
        ("npm-access-token", "npm_" + s(36)),
        ("octopus-deploy-api-key", "API-" + s(26, UPPER_ALNUM)),
        ("openai-api-key", "sk-proj-" + s(74, URLSAFE) + "T3BlbkFJ" + s(74, URLSAFE)),
        ("openai-api-key/svcacct", "sk-svcacct-" + s(58, URLSAFE) + "T3BlbkFJ" + s(58, URLSAFE)),
        ("openai-api-key/legacy", "sk-" + s(20) + "T3BlbkFJ" + s(20)),
        ("openshift-user-token", "sha256~" + s(43, URLSAFE)),
        ("perplexity-api-key", "pplx-" + s(48)),
        ("planetscale-api-token", "pscale_tkn_" + s(43, URLSAFE)),
        ("planetscale-oauth-token", "pscale_oauth_" + s(43, URLSAFE)),
        ("planetscale-password", "pscale_pw_" + s(43, URLSAFE)),
        ("postman-api-token", "PMAK-" + s(24, HEX) + "-" + s(34, HEX)),
        ("prefect-api-token", "pnu_" + s(36)),
        ("pulumi-api-token", "pul-" + s(40, HEX)),
        ("pypi-upload-token", "pypi-AgEIcHlwaS5vcmc" + s(120, URLSAFE)),
        ("readme-api-token", "rdme_" + s(70, LOWER_ALNUM)),
        ("rubygems-api-token", "rubygems_" + s(48, HEX)),
        ("scalingo-api-token", "tk-us-" + s(48, URLSAFE)),
        ("sendgrid-api-token", "SG." + s(22, URLSAFE) + "." + s(43, URLSAFE)),
        ("sendinblue-api-token", "xkeysib-" + s(64, HEX) + "-" + s(16)),
        ("sentry-user-token", "sntryu_" + s(64, HEX)),
        (
            "sentry-org-token",
            "sntrys_"
            + base64.b64encode(
                json.dumps(
                    {
                        "iat": 1733000000.5,
                        "url": "https://sentry.io",
                        "region_url": "https://us.sentry.io",
                        "org": "acme",
                    }
                ).encode()
            )
            .decode()
            .rstrip("=")
            + "_"
            + s(43, B64),
        ),
        ("settlemint-personal-access-token", "sm_pat_" + s(16)),
        ("shippo-api-token", "shippo_live_" + s(40, HEX)),
        ("shopify-access-token", "shpat_" + s(32, HEX)),
        ("shopify-custom-access-token", "shpca_" + s(32, HEX)),
        ("shopify-private-app-access-token", "shppa_" + s(32, HEX)),
        ("shopify-shared-secret", "shpss_" + s(32, HEX)),
        ("slack-bot-token", "xoxb-" + n(12) + "-" + n(13) + "-" + s(24)),
        ("slack-user-token", "xoxp-" + n(12) + "-" + n(12) + "-" + n(13) + "-" + s(32, HEX)),
        ("slack-app-token", "xapp-1-A" + s(10, UPPER_ALNUM) + "-" + n(13) + "-" + s(64, HEX)),
        ("slack-config-refresh-token", "xoxe-1-" + s(146, UPPER_ALNUM)),
        ("slack-legacy-workspace-token", "xoxa-2-" + s(40)),
        ("sourcegraph-access-token", "sgp_" + s(16, HEX) + "_" + s(40, HEX)),
        ("square-access-token", "EAAA" + s(60, URLSAFE)),
        ("square-access-token/sq0atp", "sq0atp-" + s(22, URLSAFE)),
        ("stripe-access-token", "sk_live_" + s(99)),
        ("stripe-access-token/restricted", "rk_test_" + s(40)),
        ("twilio-api-key", "SK" + s(32, HEX)),
        ("vault-service-token", "hvs." + s(100, URLSAFE)),
        ("vault-service-token/legacy", "s." + s(24)),
        ("vault-batch-token", "hvb." + s(150, URLSAFE)),
        # Formats gitleaks does not list (yet), from the providers' own documentation.
        ("(openrouter key)", "sk-or-v1-" + s(64, HEX)),
        ("(google oauth client secret)", "GOCSPX-" + s(28, URLSAFE)),
        ("(google oauth access token)", "ya29." + s(60, URLSAFE)),
        ("(groq key)", "gsk_" + s(52)),
        ("(replicate token)", "r8_" + s(37)),
        ("(xai key)", "xai-" + s(80)),
        ("(langsmith key)", "lsv2_sk_" + s(32, HEX) + "_" + s(10, HEX)),
        ("(mapbox secret token)", "sk.eyJ1Ijoi" + s(40, URLSAFE) + "." + s(22, URLSAFE)),
        ("atlassian-api-token (prefix)", "ATATT3xFfGF0" + s(180, URLSAFE)),
        ("discord-bot-token (detect-secrets)", "M" + s(25, URLSAFE) + "." + s(6, URLSAFE) + "." + s(27, URLSAFE)),
        ("mailchimp-api-key (detect-secrets)", s(32, HEX) + "-us" + n(2)),
    ]


#: Where a prefixed key stands: neutral contexts (no name that says "secret"), so the prefix alone must find it,
#: and the places sessions show keys. Each key appears in two of them, in turn.
_PREFIX_CONTEXTS = (
    "here is what `env` printed:\nCONFIG={v}\nEDITOR=vim",
    '{{"tool": "Bash", "input": {{"command": "deploy --with {v} --env prod"}}}}',
    "2026-12-01T10:00:00Z INFO sending header value {v} to upstream",
    "value = '{v}'\nprint(value)",
    "- name: Configure\n  run: ./configure --with '{v}'",
    "the CI log shows `{v}` in the failing step",
    "curl -s https://api.example.com/v1/ping -d 'k={v}'",
    "[settings]\nvalue = {v}\nregion = eu-west-1",
)

# -- keyword rules: a vendor's name, an assignment, a token of its alphabet -----------------------------------


def _keyword(g: _Gen) -> list[tuple[str, str, str]]:
    """(gitleaks rule, the variable holding it, value)."""
    s = g.s
    return [
        ("adafruit-api-key", "ADAFRUIT_IO_KEY", s(32, LOWER_ALNUM + "_-")),
        ("algolia-api-key", "ALGOLIA_ADMIN_API_KEY", s(32, LOWER_ALNUM)),
        ("alibaba-secret-key", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", s(30, LOWER_ALNUM)),
        ("asana-client-secret", "asana_client_secret", s(32, LOWER_ALNUM)),
        ("atlassian-api-token", "JIRA_API_TOKEN", s(24)),
        ("beamer-api-token", "BEAMER_API_KEY", "b_" + s(44, LOWER_ALNUM + "=_-")),
        ("bitbucket-client-secret", "BITBUCKET_CLIENT_SECRET", s(64, LOWER_ALNUM + "_-")),
        ("cisco-meraki-api-key", "MERAKI_DASHBOARD_API_KEY", s(40, HEX)),
        ("cloudflare-api-key", "CLOUDFLARE_API_TOKEN", s(40, LOWER_ALNUM + "_-")),
        ("cloudflare-global-api-key", "CLOUDFLARE_API_KEY", s(37, HEX)),
        ("codecov-access-token", "CODECOV_TOKEN", s(32, LOWER_ALNUM)),
        ("cohere-api-token", "CO_API_KEY", s(40)),
        ("coinbase-access-token", "COINBASE_ACCESS_TOKEN", s(64, LOWER_ALNUM + "_-")),
        ("confluent-secret-key", "CONFLUENT_CLOUD_API_SECRET", s(64, LOWER_ALNUM)),
        ("contentful-delivery-api-token", "CONTENTFUL_DELIVERY_TOKEN", s(43, LOWER_ALNUM + "=_-")),
        ("datadog-access-token", "DD_API_KEY", s(40, LOWER_ALNUM)),
        ("discord-client-secret", "DISCORD_CLIENT_SECRET", s(32, LOWER_ALNUM + "=_-")),
        ("droneci-access-token", "DRONE_TOKEN", s(32, LOWER_ALNUM)),
        ("dropbox-api-token", "DROPBOX_ACCESS_TOKEN", "sl." + s(135, LOWER_ALNUM + "-=_")),
        ("etsy-access-token", "ETSY_API_KEY", s(24, LOWER_ALNUM)),
        ("facebook-secret", "FACEBOOK_APP_SECRET", s(32, HEX)),
        ("fastly-api-token", "FASTLY_API_TOKEN", s(32, LOWER_ALNUM + "=_-")),
        ("finicity-client-secret", "FINICITY_SECRET", s(20, LOWER_ALNUM)),
        ("freshbooks-access-token", "FRESHBOOKS_TOKEN", s(64, LOWER_ALNUM)),
        ("gitter-access-token", "GITTER_TOKEN", s(40, LOWER_ALNUM + "_-")),
        ("gocardless-api-token", "GOCARDLESS_ACCESS_TOKEN", "live_" + s(40, LOWER_ALNUM + "-_=")),
        ("heroku-api-key", "HEROKU_API_KEY", g.uuid()),
        ("hubspot-api-key", "HUBSPOT_API_KEY", g.uuid().upper()),
        ("intercom-api-key", "INTERCOM_ACCESS_TOKEN", s(60, LOWER_ALNUM + "=_-")),
        ("jfrog-identity-token", "JFROG_ACCESS_TOKEN", s(64, LOWER_ALNUM)),
        ("kraken-access-token", "KRAKEN_API_SECRET", s(88, LOWER_ALNUM + "/=_+-")),
        ("kucoin-secret-key", "KUCOIN_API_SECRET", g.uuid()),
        ("launchdarkly-access-token", "LAUNCHDARKLY_ACCESS_TOKEN", s(40, LOWER_ALNUM + "=_-")),
        ("linear-client-secret", "LINEAR_CLIENT_SECRET", s(32, HEX)),
        ("linkedin-client-secret", "LINKEDIN_CLIENT_SECRET", s(16, LOWER_ALNUM)),
        ("looker-client-secret", "LOOKERSDK_CLIENT_SECRET", s(24, LOWER_ALNUM)),
        ("mailgun-private-api-token", "MAILGUN_API_KEY", "key-" + s(32, HEX)),
        ("mailgun-signing-key", "MAILGUN_WEBHOOK_SIGNING_KEY", s(32, HEX) + "-" + s(8, HEX) + "-" + s(8, HEX)),
        ("mapbox-api-token", "MAPBOX_ACCESS_TOKEN", "pk." + s(60, LOWER_ALNUM) + "." + s(22, LOWER_ALNUM)),
        ("mattermost-access-token", "MATTERMOST_TOKEN", s(26, LOWER_ALNUM)),
        ("messagebird-api-token", "MESSAGEBIRD_ACCESS_KEY", s(25, LOWER_ALNUM)),
        ("netlify-access-token", "NETLIFY_AUTH_TOKEN", s(43, LOWER_ALNUM + "=_-")),
        ("new-relic-user-api-key", "NEW_RELIC_API_KEY", "NRAK-" + s(27, UPPER_ALNUM)),
        ("new-relic-insert-key", "NEW_RELIC_INSERT_KEY", "NRII-" + s(32, LOWER_ALNUM + "-")),
        ("nytimes-access-token", "NYTIMES_API_KEY", s(32, LOWER_ALNUM + "=_-")),
        ("okta-access-token", "OKTA_API_TOKEN", "00" + s(40, ALNUM + "=-")),
        ("plaid-secret-key", "PLAID_SECRET", s(30, LOWER_ALNUM)),
        ("privateai-api-token", "PRIVATE_AI_API_KEY", s(32, LOWER_ALNUM)),
        ("rapidapi-access-token", "X_RAPIDAPI_KEY", s(50, LOWER_ALNUM + "_-")),
        ("sendbird-access-token", "SENDBIRD_API_TOKEN", s(40, HEX)),
        ("sentry-access-token", "SENTRY_AUTH_TOKEN", s(64, HEX)),
        ("snyk-api-token", "SNYK_TOKEN", g.uuid()),
        ("sonar-api-token", "SONAR_TOKEN", "squ_" + s(40, HEX)),
        ("squarespace-access-token", "SQUARESPACE_API_KEY", g.uuid()),
        ("sumologic-access-token", "SUMO_ACCESS_KEY", s(64, LOWER_ALNUM)),
        ("telegram-bot-api-token", "TELEGRAM_BOT_TOKEN", g.num(10) + ":A" + s(34, LOWER_ALNUM + "_-")),
        ("travisci-access-token", "TRAVIS_TOKEN", s(22, LOWER_ALNUM)),
        ("twitch-api-token", "TWITCH_CLIENT_SECRET", s(30, LOWER_ALNUM)),
        ("twitter-api-secret", "TWITTER_API_SECRET", s(50)),
        ("twitter-access-secret", "TWITTER_ACCESS_TOKEN_SECRET", s(45)),
        ("twitter-bearer-token", "TWITTER_BEARER_TOKEN", "A" * 22 + s(90)),
        ("typeform-api-token", "TYPEFORM_TOKEN", "tfp_" + s(59, LOWER_ALNUM + "-_.=")),
        ("yandex-api-key", "YANDEX_API_KEY", "AQVN" + s(36, URLSAFE)),
        ("zendesk-secret-key", "ZENDESK_API_TOKEN", s(40, LOWER_ALNUM)),
        ("generic-api-key", "api_secret", s(32)),
        ("ibm-cloud-iam-key (detect-secrets)", "IBMCLOUD_API_KEY", s(44, URLSAFE)),
        ("generic-api-key/access", "ACCESS_KEY_SECRET", s(40, B64)),
        ("generic-api-key/creds", "service_credentials", s(28)),
    ]


_KEYWORD_CONTEXTS = (
    "export {k}={v}",
    '{{"{k}": "{v}"}}',
    "{k}: {v}",
    "{k} = '{v}'",
    'os.environ["{k}"] = "{v}"',
    "{k}={v} npm run deploy",
)

# -- secrets in the syntax of a tool or a file (issue 38's probe and their relatives) ---------------------------


def _syntax(g: _Gen) -> list[Example]:
    s = g.s
    out: list[Example] = []

    def add(shape: str, text: str, *secrets: str, source: str = "issue 38") -> None:
        out.append(Example(shape, text, secrets, source))

    p = "p@ss" + s(4) + "@w0rd"
    add("url-password-with-@", f"DATABASE_URL=postgres://app:{p}@db.internal:5432/app", p)
    p = s(6) + "@" + s(5) + ":x"
    add("url-password-@-and-colon", f"git clone https://dev:{p}@git.example.com/team/repo.git", p)
    p = s(10)
    add("url-password-no-user", f"REDIS_URL=redis://:{p}@cache.internal:6379/0", p)
    p = s(12)
    add("url-password-amqp", f"broker_url = 'amqp://guest:{p}@rabbit:5672//'", p)
    p = "Pa%40" + s(8)
    add("url-password-encoded", f"SQLALCHEMY_DATABASE_URI=mysql+pymysql://root:{p}@127.0.0.1/app", p)
    p = s(14)
    add("netrc", f"machine github.com\nlogin octocat\npassword {p}\n", p, source="netrc")
    p = s(14)
    add("netrc-one-line", f"machine api.example.com login deploy password {p}", p, source="netrc")
    p = s(12)
    add("docker-login-p", f"docker login -u ci -p {p} registry.gitlab.com", p)
    p = s(12)
    add("docker-login-password", f"docker login --username ci --password '{p}' ghcr.io", p)
    p = s(16)
    add("podman-login-p", f"podman login quay.io -u robot -p={p}", p)
    auth = base64.b64encode(f"ci:{s(20)}".encode()).decode()
    add("docker-config-auth", '{"auths": {"https://index.docker.io/v1/": {"auth": "' + auth + '"}}}', auth)
    auth = base64.b64encode(f"_json_key:{s(30)}".encode()).decode()
    add(
        "docker-config-auth-pretty",
        '"auths": {\n  "gcr.io": {\n    "auth": "' + auth + '",\n    "email": "a@b.c"\n  }\n}',
        auth,
    )
    p = s(12)
    add("redis-cli-a", f"redis-cli -a {p} --no-auth-warning INFO", p)
    p = s(12)
    add("redis-cli-pass", f"redis-cli -h 10.0.0.3 --pass '{p}' ping", p)
    p = s(11)
    add("htpasswd-b", f"htpasswd -b .htpasswd admin {p}", p)
    p = s(11)
    add("htpasswd-bc", f"htpasswd -bc /etc/apache2/.htpasswd alice '{p}'", p)
    h = "$2b$12$" + s(53, ALNUM + "./")
    add("bcrypt-hash", f'ADMIN_PASSWORD_HASH="{h}"', h, source="bcrypt")
    h = "$2a$10$" + s(53, ALNUM + "./")
    add("bcrypt-hash-bare", f"hash was {h} before the migration", h, source="bcrypt")
    h = "$argon2id$v=19$m=65536,t=3,p=4$" + s(22, B64) + "$" + s(43, B64)
    add("argon2-hash", f"{{'email': 'a@b.c', 'pw': '{h}'}}", h, source="argon2")
    h = "$6$" + s(16, ALNUM + "./") + "$" + s(86, ALNUM + "./")
    add("sha512-crypt-shadow", f"root:{h}:19700:0:99999:7:::", h, source="crypt(3)")
    h = "$apr1$" + s(8, ALNUM + "./") + "$" + s(22, ALNUM + "./")
    add("htpasswd-apr1-line", f"admin:{h}", h, source="htpasswd")
    t = "SG." + s(22, URLSAFE) + "." + s(43, URLSAFE)
    add("sendgrid-bare", f"sendgrid key {t}", t, source="gitleaks:sendgrid-api-token")
    p = s(10)
    add("mysql-p", f"mysqldump -h db -u root -p{p} app > dump.sql", p)
    p = s(10)
    add("mysql-password", f"mysql --password={p} -e 'select 1'", p)
    p = s(10)
    add("pgpassword", f"PGPASSWORD={p} pg_dump -h db app", p)
    p = s(10)
    add("pgpass-file", f"localhost:5432:*:postgres:{p}", p, source="pgpass")
    p = s(10)
    add("sshpass", f"sshpass -p {p} scp build.tgz deploy@host:/srv", p)
    p = s(10)
    add("curl-u", f"curl --user admin:{p} -X POST https://ci.internal/job/build", p, source="gitleaks:curl-auth-user")
    b = base64.b64encode(f"admin:{s(10)}".encode()).decode()
    add(
        "curl-basic-header",
        f'curl -H "Authorization: Basic {b}" https://ci.internal/',
        b,
        source="gitleaks:curl-auth-header",
    )
    p = s(10)
    add("wget-password", f"wget --user=ci --password={p} https://files.internal/a.tgz", p)
    p = s(10)
    add("openssl-pass", f"openssl rsa -in key.pem -passin pass:{p} -out plain.pem", p)
    p = s(10)
    add("keytool-storepass", f"keytool -list -keystore app.jks -storepass {p}", p)
    p = s(12)
    add(
        "nuget-config-password",
        f'<add key="ClearTextPassword" value="{p}" />',
        p,
        source="gitleaks:nuget-config-password",
    )
    p = s(16, LOWER_ALNUM)
    add(
        "k8s-secret-data",
        f"apiVersion: v1\nkind: Secret\ndata:\n  password: {base64.b64encode(p.encode()).decode()}",
        base64.b64encode(p.encode()).decode(),
        source="gitleaks:kubernetes-secret-yaml",
    )
    p = s(8, HEX) + ":" + s(8, HEX)
    add(
        "sidekiq-sensitive-url",
        f"source 'https://{p}@gems.contribsys.com/'",
        p.split(":")[1],
        source="gitleaks:sidekiq-sensitive-url",
    )
    w = f"https://acme.webhook.office.com/webhookb2/{g.uuid()}@{g.uuid()}/IncomingWebhook/{s(32, HEX)}/{g.uuid()}"
    add(
        "microsoft-teams-webhook",
        f"TEAMS_URL={w}",
        w.split("/IncomingWebhook/")[1],
        source="gitleaks:microsoft-teams-webhook",
    )
    w = f"https://discord.com/api/webhooks/{g.num(18)}/{s(68, URLSAFE)}"
    add("discord-webhook", f"DISCORD_WEBHOOK_URL={w}", w.rsplit("/", 1)[1], source="(discord webhook)")
    t = s(40, URLSAFE)
    add("bearer-token-in-prose", f"the proxy answered 401 until I sent Bearer {t} with it", t)
    w = "https://hooks.slack.com/services/T" + s(8, UPPER_ALNUM) + "/B" + s(8, UPPER_ALNUM) + "/" + s(24)
    add(
        "slack-webhook-url", f"requests.post('{w}', json=msg)", w.rsplit("/", 1)[1], source="gitleaks:slack-webhook-url"
    )
    t = s(30)
    add("facebook-access-token", f"token={g.num(15)}|{t}", t, source="gitleaks:facebook-access-token")
    t = "a" + s(31, HEX)
    add("authorization-token", f"requests.get(url, headers={{'Authorization': 'token {t}'}})", t)
    t = s(40, URLSAFE)
    add("x-api-key-header", f"curl -H 'X-API-Key: {t}' https://api.example.com", t)
    t = s(32)
    add("query-api-key", f"GET /v1/data?api_key={t}&format=json", t)
    t = s(40, B64)
    add("aws-secret-access-key", f"aws_secret_access_key={t}", t, source="gitleaks:aws (context)")
    t = s(40, B64)
    add(
        "aws-secret-json",
        f'{{"AccessKeyId": "ASIA{s(16, UPPER_ALNUM)}", "SecretAccessKey": "{t}", "SessionToken": "{s(300, B64)}"}}',
        t,
    )
    k = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI" + s(64, B64) + "\n" + s(64, B64) + "\n-----END EC PRIVATE KEY-----"
    add("pem-ec-private-key", k, k.split("\n")[1], source="gitleaks:private-key")
    k = (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF"
        + s(64, B64)
        + "\n="
        + s(4, B64)
        + "\n-----END PGP PRIVATE KEY BLOCK-----"
    )
    add("pgp-private-key", k, k.split("\n")[2], source="gitleaks:private-key")
    gcp = json.dumps(
        {
            "type": "service_account",
            "project_id": "acme",
            "private_key_id": s(40, HEX),
            "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvg" + s(64, B64) + "\n-----END PRIVATE KEY-----\n",
            "client_email": "x@acme.iam.gserviceaccount.com",
        }
    )
    add("gcp-service-account", gcp, "MIIEvg", source="gitleaks:private-key")
    p = s(12)
    add("json-password", f'{{"user": "admin", "password": "{p}"}}', p)
    p = s(12)
    add("yaml-passphrase", f"ssh:\n  passphrase: {p}", p)
    p = s(12)
    add(
        "terraform-password",
        f'resource "azurerm_sql_server" "db" {{\n  administrator_login_password = "{p}"\n}}',
        p,
        source="gitleaks:hashicorp-tf-password",
    )
    p = s(12)
    add("ansible-vars", f"ansible_password: {p}\nansible_user: admin", p)
    p = s(12)
    add("spring-datasource", f"spring.datasource.password={p}", p)
    p = s(12)
    add("odbc-pwd", f"Server=tcp:sql.internal;Database=app;User Id=sa;Pwd={p};", p)
    p = s(12)
    add("git-credential-store", f"https://octocat:{p}@github.com", p)
    p = s(12)
    add("pip-index-url", f"pip install --index-url https://__token__:{p}@pypi.internal/simple app", p)
    p = s(12)
    add("smtp-password-setting", f"EMAIL_HOST_PASSWORD = '{p}'", p)
    t = s(43, URLSAFE) + "="
    add(
        "python-bytes-literal",
        f'SIGNING_KEY = b"{t}"',
        t,
        source="(added after the held-out run: Python string prefixes)",
    )
    t = s(24)
    add(
        "python-raw-string", f"db_password = r'{t}'", t, source="(added after the held-out run: Python string prefixes)"
    )
    t = s(20, UPPER_ALNUM)
    add("otpauth-secret", f"otpauth://totp/ACME:dev?secret={t}&issuer=ACME", t)
    return out


# -- look-alikes -----------------------------------------------------------------------------------------------


def _lookalikes(g: _Gen) -> list[str]:
    s, u = g.s, g.uuid
    sha = lambda b: hashlib.sha256(b).hexdigest()  # noqa: E731 - a local shorthand
    return [
        # ordinary config keys and values
        '{"max_tokens": 1024, "max_output_tokens": 8192, "temperature": 0}',
        "tokenizer = AutoTokenizer.from_pretrained('bert-base-uncased')",
        '{"token_type": "Bearer", "expires_in": 3599, "scope": "repo read:org"}',
        "id = Column(Integer, primary_key=True, autoincrement=True)",
        "ORDER BY sort_key DESC, partition_key ASC",
        '{"key": "cmd+k cmd+s", "command": "workbench.action.openGlobalKeybindings"}',
        "keys = list(config.keys())\nfor key in keys: print(key)",
        '"ssh_key_path": "/home/dev/.ssh/id_rsa"',
        "private_key_file: keys/server.key",
        "SSL_KEY=/etc/letsencrypt/live/example.com/privkey.pem",
        "valueFrom:\n  secretKeyRef:\n    name: openai\n    key: api-key",
        "volumes:\n  - name: creds\n    secret:\n      secretName: gcp-creds",
        "PASSWORD_RESET_TIMEOUT = 259200\nAUTH_PASSWORD_VALIDATORS = []",
        '{"password": null, "password_confirmation": null}',
        "DB_PASSWORD=${DB_PASSWORD:?set it in .env}",
        "apiKey: process.env.STRIPE_SECRET_KEY!,",
        'token = os.environ.get("HF_TOKEN")',
        'secret = getpass.getpass("Vault password: ")',
        "export GITHUB_TOKEN=$(gh auth token)",
        'echo "$DOCKER_PASSWORD" | docker login -u "$DOCKER_USERNAME" --password-stdin',
        "docker login ghcr.io  # prompts for the password",
        "redis-cli -h localhost -p 6379 ping",
        "htpasswd -c .htpasswd admin  # prompts",
        "mysql -u root -p app < schema.sql",
        "mkdir -p build/dist && cp -a src/. build/",
        "ssh -p 2222 deploy@host 'systemctl restart app'",
        'auth: "github"\nauth_provider: oidc',
        '{"authenticated": true, "auth_required": false}',
        "SECRET_KEY_BASE: <%= Rails.application.credentials.secret_key_base %>",
        '{"sessionKey": "sid", "cookieName": "connect.sid"}',
        "api_key_name = 'X-Api-Key'",
        "password_field = forms.CharField(widget=forms.PasswordInput)",
        "def reset_password(self, token: str) -> None:",
        "`secret` is a reserved word in our config schema",
        "the token limit is 200k; tokens are counted by the tokenizer",
        "credentials_file: ~/.config/gcloud/application_default_credentials.json",
        "AWS_SHARED_CREDENTIALS_FILE=~/.aws/credentials",
        "--password-file /run/secrets/db_password",
        "kubectl create secret generic db --from-file=password=./password.txt",
        "terraform output -raw db_password",
        "git config --global credential.helper store",
        # hashes and checksums
        f"commit {hashlib.sha1(s(8).encode()).hexdigest()}\nMerge: {s(7, HEX)} {s(7, HEX)}",
        f"HEAD is now at {s(7, HEX)} fix(auth): rotate keys",
        f"{sha(b'a')}  node-v22.11.0-linux-x64.tar.xz",
        f"image: ghcr.io/acme/api@sha256:{sha(b'b')}",
        f'"resolved": "https://registry.npmjs.org/react/-/react-18.3.1.tgz",\n"integrity": "sha512-{base64.b64encode(hashlib.sha512(b"r").digest()).decode()}"',
        f"github.com/stretchr/testify v1.9.0 h1:{base64.b64encode(hashlib.sha256(b't').digest()).decode()}",
        f'checksum = "{sha(b"c")}"',
        f"--hash=sha256:{sha(b'd')}",
        f"oid sha256:{sha(b'e')}",
        f"md5: {hashlib.md5(b'f').hexdigest()}  sha1: {hashlib.sha1(b'f').hexdigest()}",
        f'"etag": "W/\\"{s(27, HEX)}\\""',
        f"sha256-{base64.b64encode(hashlib.sha256(b'csp').digest()).decode()}",
        f"Subresource Integrity: sha384-{base64.b64encode(hashlib.sha384(b'x').digest()).decode()}",
        # ids
        f'{{"session_id": "{u()}", "parent": "{u()}"}}',
        f"trace_id={s(32, HEX)} span_id={s(16, HEX)} parent_span_id={s(16, HEX)}",
        f'{{"id": "msg_01{s(22)}", "model": "claude-sonnet-4", "stop_reason": "tool_use"}}',
        f'{{"type": "tool_use", "id": "toolu_01{s(22)}", "name": "Read"}}',
        f'{{"id": "chatcmpl-{s(29)}", "system_fingerprint": "fp_{s(10, HEX)}"}}',
        f'{{"call_id": "call_{s(24)}", "type": "function_call_output"}}',
        f"request id: req_{s(24)}",
        f'"rollout_id": "01{s(24, "0123456789ABCDEFGHJKMNPQRSTVWXYZ")}"',
        f"ses_{s(12, HEX)}{s(14)}",
        f"Created pull request #{g.num(4)}: https://github.com/acme/api/pull/{g.num(4)}",
        f"stripe event evt_{s(24)} for cus_{s(14)}",
        f"ami-{s(17, HEX)} subnet-{s(17, HEX)} sg-{s(17, HEX)} vpc-{s(8, HEX)}",
        f"arn:aws:iam::{g.num(12)}:role/deploy",
        f"projects/{g.num(12)}/locations/us-central1/keyRings/app/cryptoKeys/db",
        f"The job {u()} finished in 42.1s",
        f"device_id: {s(16, HEX)}\ninstallation_id: {u()}",
        f"nonce={s(16)} state={s(20)}",
        f"correlationId={u()}",
        f'{{"uuid": "{u()}", "leafUuid": "{u()}"}}',
        # paths and urls
        "/Users/dev/Library/Application Support/Code/User/settings.json",
        "~/.local/share/opencode/storage/session/global/ses_abc.json",
        "C:\\Users\\dev\\.codex\\sessions\\2026\\11\\rollout.jsonl",
        "https://github.com/acme/api/blob/main/src/auth/token_store.py#L42",
        "https://user@example.com/path (no password in this URL)",
        "http://localhost:3000/callback?code=abc&state=xyz",
        "mailto:security@example.com",
        "git@github.com:acme/api.git",
        "ssh://git@gitlab.example.com:2222/team/app.git",
        "postgres://localhost:5432/app_test",
        # public material and placeholders
        f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{s(43, B64)} dev@host",
        f"-----BEGIN CERTIFICATE-----\nMIIB{s(60, B64)}\n-----END CERTIFICATE-----",
        f"-----BEGIN PUBLIC KEY-----\nMFkw{s(60, B64)}\n-----END PUBLIC KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY----- (the key file starts like this)",
        "OPENAI_API_KEY=sk-...your key...",
        "ANTHROPIC_API_KEY=sk-ant-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX",
        "STRIPE_SECRET_KEY=sk_test_xxxxxxxxxxxxxxxxxxxxxxxx",
        "password: <redacted>",
        "api_key: YOUR_API_KEY_HERE",
        'token: "{{ vault_token }}"',
        "Authorization: Bearer $TOKEN",
        "Authorization: Bearer ${{ secrets.GITHUB_TOKEN }}",
        "headers={'Authorization': f'Bearer {token}'}",
        # code and prose
        "if password != confirm: raise ValueError('passwords differ')",
        "const secretKey = crypto.randomBytes(32).toString('hex');",
        "token_bucket = TokenBucket(rate=10, capacity=100)",
        "We rotate the API key every 90 days; the key vault holds it.",
        "JWT tokens have three parts: header.payload.signature",
        "The password hashing uses bcrypt with cost 12.",
        "# TODO: move the secret out of the repo before release",
        f"base64 of the logo: iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAA{s(40, B64)}",
        f"wasm hash {s(64, HEX)} in build output",
        f"font-src 'self' data:; style-src 'sha256-{base64.b64encode(hashlib.sha256(b'z').digest()).decode()}'",
        "UUIDs like 123e4567-e89b-12d3-a456-426614174000 identify rows",
        f"export NODE_OPTIONS=--max-old-space-size=4096 PATH=$PATH:/opt/{s(6, LOWER_ALNUM)}/bin",
        "pytest -k 'test_token and not slow' -x --tb=short",
        "KEY_PREFIX=app:v2: CACHE_TTL=300",
        "encryption_key_id: alias/app-db",
        "signing_key_algorithm: RS256",
        "public_key_pem: |\n  -----BEGIN PUBLIC KEY-----",
        "webhook_secret_header = 'X-Hub-Signature-256'",
        f"Signature: sha256={s(64, HEX)}  (GitHub's webhook HMAC of this payload)",
        "redis.call('GET', KEYS[1])",
        "for k, v in secrets.items(): print(k)",
        "auth_token_expiry_seconds: 3600",
        f"cursor={base64.b64encode(json.dumps({'offset': 100}).encode()).decode()}",
        f"pagination next_page_token: {base64.b64encode(json.dumps({'p': 2}).encode()).decode()}",
    ]


def positives(seed: int = 38) -> list[Example]:
    """Every credential of the development set, in its contexts."""
    g = _Gen(seed)
    out: list[Example] = []
    for i, (rule, value) in enumerate(_prefixed(g)):
        for j in (0, 1):
            ctx = _PREFIX_CONTEXTS[(2 * i + j) % len(_PREFIX_CONTEXTS)]
            out.append(Example(rule, ctx.format(v=value), (value,), f"gitleaks:{rule.split('/')[0]}"))
    for i, (rule, name, value) in enumerate(_keyword(g)):
        value = value if value[0].isalnum() else "a" + value[1:]  # a value starts with a letter or a digit
        ctx = _KEYWORD_CONTEXTS[i % len(_KEYWORD_CONTEXTS)]
        out.append(Example(rule, ctx.format(k=name, v=value), (value,), f"gitleaks:{rule.split('/')[0]}"))
    return out + _syntax(g)


def negatives(seed: int = 38) -> list[Example]:
    """The development set's look-alikes: texts redaction must leave as they are."""
    return [Example("look-alike", text, (), "catalogue") for text in _lookalikes(_Gen(seed + 1))]


def heldout() -> tuple[list[Example], list[Example]]:
    """The held-out set: (credentials, look-alikes)."""
    pos: list[Example] = []
    neg: list[Example] = []
    for line in HELDOUT.read_text("utf-8").splitlines():
        row = json.loads(line)
        ex = Example(row["shape"], row["text"], tuple(row.get("secrets", ())), "heldout")
        (pos if row["kind"] == "secret" else neg).append(ex)
    return pos, neg
