#!/usr/bin/env python3
"""Writes bench/redaction/heldout.jsonl: the held-out set of the redaction bench (bench/scenarios/redaction.py).

Credential shapes in the contexts coding sessions hold them (a shell line, a config file, a tool call's JSON),
and look-alikes (ordinary config keys, hashes, ids, UUIDs, paths, public keys, placeholders). Written, and its
numbers on the code before (recall 47/66, 5 of 72 clean texts touched) taken, before any rule of issue 38's
round was written; never tuned against. Values are random (seeded), contexts by hand. Run it to rewrite the
file (the same bytes).
"""

import base64
import hashlib
import json
import random
import string
import uuid

R = random.Random(20261207)
A = string.ascii_letters + string.digits


def r(n, alpha=A):
    return "".join(R.choice(alpha) for _ in range(n))


HEX = "0123456789abcdef"
B64 = A + "+/"
URL = A + "-_"


def b64(n):
    return r(n, B64)


out = []


def pos(shape, text, *secrets):
    out.append({"kind": "secret", "shape": shape, "text": text, "secrets": list(secrets)})


def neg(shape, text):
    out.append({"kind": "clean", "shape": shape, "text": text})


t = "glpat-" + r(20, URL)
pos("gitlab-token-in-url", f"git remote set-url origin https://oauth2:{t}@gitlab.com/team/app.git", t)
t = "dop_v1_" + r(64, HEX)
pos("digitalocean-pat", f"export DIGITALOCEAN_TOKEN={t}\ndoctl compute droplet list", t)
t = "shpat_" + r(32, HEX)
pos("shopify-access-token", f"SHOPIFY_ACCESS_TOKEN={t}", t)
t = (
    "sntrys_"
    + base64.b64encode(json.dumps({"iat": 1733500000, "url": "https://sentry.io", "org": "acme"}).encode())
    .decode()
    .rstrip("=")
    + "_"
    + r(43, URL)
)
pos("sentry-org-token", f"sentry-cli --auth-token {t} releases new 1.4.2", t)
t = r(40, HEX)
pos("drf-token-header", f'curl -H "Authorization: Token {t}" https://api.internal/v1/items/', t)
p = "S3cr3t!Pa55" + r(4)
pos("docker-login-p", f"docker login registry.example.com -u deploy -p '{p}'", p)
p = r(12)
pos("redis-cli-a", f"redis-cli -h cache.internal -p 6380 -a {p} PING", p)
p = "Adm1n" + r(6) + "!"
pos("htpasswd-b", f"sudo htpasswd -b -c /etc/nginx/.htpasswd admin '{p}'", p)
p = str(uuid.UUID(int=R.getrandbits(128)))
pos(
    "netrc-heroku",
    f"$ cat ~/.netrc\nmachine api.heroku.com\n  login me@example.com\n  password {p}\nmachine git.heroku.com\n  login me@example.com\n  password {p}",
    p,
)
a = base64.b64encode(f"octocat:ghp_{r(36)}".encode()).decode()
pos("docker-config-auth", '{\n  "auths": {\n    "ghcr.io": {\n      "auth": "' + a + '"\n    }\n  }\n}', a)
h = "$2y$10$" + r(53, A + "./")
pos("bcrypt-in-sql", f"INSERT INTO users (email, password_hash) VALUES ('a@b.c', '{h}');", h)
p = "p@ss:w0rd" + r(3)
pos("url-password-at-colon", f"DATABASE_URL=postgresql://app:{p}@db.internal:5432/app", p)
p = "Zq8%40x" + r(5)
pos("mongodb-srv", f'client = MongoClient("mongodb+srv://admin:{p}@cluster0.ab1cd.mongodb.net/?retryWrites=true")', p)
t = r(32, HEX)
pos("twilio-auth-token", f"TWILIO_ACCOUNT_SID=AC{r(32, HEX)}\nTWILIO_AUTH_TOKEN={t}", t)
t = "SG." + r(22, URL) + "." + r(43, URL)
pos("sendgrid-in-code", f"sg = SendGridAPIClient('{t}')\nresponse = sg.send(message)", t)
t = "key-" + r(32, HEX)
pos("mailgun-key", f'requests.post(url, auth=("api", "{t}"), data=payload)', t)
t = f"{R.randint(100000000, 9999999999)}:AA{r(33, URL)}"
pos("telegram-bot-token", f'bot = telebot.TeleBot("{t}")', t)
t = f"https://discord.com/api/webhooks/{R.randint(10**17, 10**18)}/{r(68, URL)}"
pos(
    "discord-webhook",
    f"curl -H 'Content-Type: application/json' -d '{{\"content\": \"deployed\"}}' {t}",
    t.rsplit("/", 1)[1],
)
t = "dapi" + r(32, HEX)
pos("databricks-token", f"databricks configure --token <<< '{t}'", t)
t = "hvs." + r(24)
pos("vault-token", f"export VAULT_TOKEN={t}\nvault kv get secret/app", t)
t = r(14) + ".atlasv1." + r(67)
pos("terraform-cloud-token", f'credentials "app.terraform.io" {{\n  token = "{t}"\n}}', t)
t = "lin_api_" + r(40)
pos("linear-api-key", f'LINEAR_API_KEY="{t}" npx linear-cli issues', t)
t = "ntn_" + r(46)
pos("notion-token", f'const notion = new Client({{ auth: "{t}" }})', t)
t = "gsk_" + r(52)
pos("groq-key", f"GROQ_API_KEY={t} python bench.py", t)
t = "r8_" + r(37)
pos("replicate-token", f"export REPLICATE_API_TOKEN={t}", t)
t = "sk-or-v1-" + r(64, HEX)
pos("openrouter-key", f'"env": {{"OPENROUTER_API_KEY": "{t}"}}', t)
t = "sk-ant-admin01-" + r(93, URL) + "AA"
pos("anthropic-admin-key", f"curl https://api.anthropic.com/v1/organizations/users -H 'x-api-key: {t}'", t)
t = "sk-proj-" + r(74, URL) + "T3BlbkFJ" + r(74, URL)
pos("openai-project-key", f'client = OpenAI(api_key="{t}")', t)
t = "AGE-SECRET-KEY-1" + r(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")
pos(
    "age-secret-key",
    f"# created: 2026-11-30T10:00:00Z\n# public key: age1{r(58, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l')}\n{t}",
    t,
)
body = "\n".join(r(70, B64) for _ in range(5))
k = f"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA{body}\n-----END OPENSSH PRIVATE KEY-----"
pos("openssh-private-key", f"$ cat ~/.ssh/deploy_ed25519\n{k}", body.split("\n")[2])
t = "GOCSPX-" + r(28, URL)
pos(
    "google-oauth-client-secret",
    f'{{"web":{{"client_id":"1234-abc.apps.googleusercontent.com","client_secret":"{t}","redirect_uris":["http://localhost"]}}}}',
    t,
)
t = b64(86) + "=="
pos(
    "azure-storage-connection-string",
    f'AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={t};EndpointSuffix=core.windows.net"',
    t,
)
s = b64(43).replace("+", "%2B").replace("/", "%2F") + "%3D"
pos(
    "azure-sas",
    f"az storage blob download --blob-url 'https://acme.blob.core.windows.net/c/a.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-31T00:00:00Z&sig={s}'",
    s,
)
t = "ATATT3xFfGF0" + r(170, URL) + "=" + r(8, "0123456789ABCDEF")
pos("atlassian-api-token", f"JIRA_API_TOKEN={t}", t)
t = "glsa_" + r(32) + "_" + r(8, HEX)
pos("grafana-service-account-token", f'grafana_auth = "{t}"', t)
t = "NRAK-" + r(27, string.ascii_uppercase + string.digits)
pos("newrelic-user-key", f"NEW_RELIC_API_KEY={t} newrelic entity search", t)
t = "PMAK-" + r(24, HEX) + "-" + r(34, HEX)
pos("postman-api-key", f"postman login --with-api-key {t}", t)
t = "pul-" + r(40, HEX)
pos("pulumi-token", f"PULUMI_ACCESS_TOKEN={t} pulumi up --yes", t)
t = "npm_" + r(36)
pos("npmrc-auth-token", f"//registry.npmjs.org/:_authToken={t}\nalways-auth=true", t)
t = "pypi-AgEIcHlwaS5vcmc" + r(140, URL)
pos("pypirc-password", f"[pypi]\n  username = __token__\n  password = {t}", t)
t = str(uuid.UUID(int=R.getrandbits(128)))
pos("heroku-api-key-uuid", f"HEROKU_API_KEY={t} heroku apps", t)
t = "eyJhbGciOiJSUzI1NiIsImtpZCI6Ij" + r(30, URL) + "." + "eyJzdWIiOiJ" + r(80, URL) + "." + r(86, URL)
pos("jwt-bearer-curl", f'curl -s -H "Authorization: Bearer {t}" https://api.example.com/me | jq .', t)
p = "Hunter2Db!" + r(3)
pos("mysql-p", f"mysql -u root -p{p} -e 'show databases;'", p)
p = "pg_S3cret" + r(4)
pos("pgpassword-env", f"PGPASSWORD={p} psql -h db -U app -c 'select 1'", p)
p = "kube-Pa55w0rd" + r(3)
pos(
    "k8s-secret-stringdata",
    f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  username: app\n  password: {p}",
    p,
)
t = r(40, B64)
pos(
    "aws-secret-access-key",
    f"[default]\naws_access_key_id = AKIA{r(16, string.ascii_uppercase + string.digits)}\naws_secret_access_key = {t}",
    t,
)
t = "github_pat_11" + r(20, string.ascii_uppercase + string.digits) + "_" + r(59)
pos("github-fine-grained", f"gh auth login --with-token <<< {t}", t)
t = "xoxb-" + str(R.randint(10**11, 10**12)) + "-" + str(R.randint(10**12, 10**13)) + "-" + r(24)
pos("slack-bot-token", f'app = App(token="{t}", signing_secret=os.environ["SLACK_SIGNING_SECRET"])', t)
t = "rk_live_" + r(99)
pos("stripe-restricted-key", f"stripe.api_key = '{t}'", t)
t = "hf_" + r(34)
pos("huggingface-cli-login", f"huggingface-cli login --token {t} --add-to-git-credential", t)
t = r(40, URL)
pos("cloudflare-api-token", f'CLOUDFLARE_API_TOKEN="{t}" wrangler deploy', t)
t = r(3) + "8Q~" + r(31, A + "_~.-")
pos(
    "azure-ad-client-secret-json",
    f'{{"clientId": "{uuid.UUID(int=R.getrandbits(128))}", "clientSecret": "{t}", "tenantId": "contoso.onmicrosoft.com"}}',
    t,
)
t = "AIza" + r(35, URL)
pos(
    "firebase-config", f'const firebaseConfig = {{\n  apiKey: "{t}",\n  authDomain: "acme-app.firebaseapp.com",\n}};', t
)
p = "x9Lm!2" + r(4)
pos("sshpass", f"sshpass -p '{p}' ssh -o StrictHostKeyChecking=no deploy@10.0.0.5", p)
p = "Pa55w0rd" + r(3)
pos("curl-u", f"curl -u admin:{p} https://jenkins.internal/api/json", p)
t = "ghs_" + r(36)
pos("github-installation-token-url", f"git clone https://x-access-token:{t}@github.com/acme/infra.git", t)
t = "sk-" + r(32, HEX)
pos("deepseek-key", f'DEEPSEEK_API_KEY="{t}"', t)
p = "MyPass" + r(5)
pos("openssl-passout", f"openssl pkcs12 -export -in cert.pem -inkey key.pem -out bundle.p12 -passout pass:{p}", p)
p = "Pgp4ss!" + r(4)
pos("pgpass-line", f"$ cat ~/.pgpass\ndb.internal:5432:app:appuser:{p}", p)
p = "smtp-" + r(16)
pos("smtp-pass-env", f"SMTP_HOST=smtp.mailgun.org\nSMTP_USER=postmaster@mg.acme.io\nSMTP_PASS={p}", p)
t = "xai-" + r(80)
pos("xai-key", f"export XAI_API_KEY={t}", t)
t = "lsv2_pt_" + r(32, HEX) + "_" + r(10, HEX)
pos("langsmith-key", f'os.environ["LANGSMITH_API_KEY"] = "{t}"', t)
p = r(20, A + "!@#%^*")
pos(
    "keytool-storepass",
    f"keytool -importkeystore -srckeystore in.p12 -srcstoretype PKCS12 -destkeystore out.jks -deststorepass '{p}'",
    p,
)
t = r(64, HEX)
pos("generic-hex-secret-key", f"SECRET_KEY={t}", t)
t = r(43, URL) + "="
pos("fernet-key", f'FERNET_KEY = b"{t}"', t)
p = "ansible-" + r(12)
pos("ansible-become-pass", f"ansible-playbook site.yml -e 'ansible_become_pass={p}'", p)

# -- look-alikes: ordinary keys, hashes, ids, UUIDs, paths, public material, placeholders ---------------
neg("max-tokens", '{"model": "claude-sonnet-4", "max_tokens": 4096, "temperature": 0.2}')
neg("tokenizer", 'enc = tiktoken.get_encoding("cl100k_base")\ntokenizer = "cl100k_base"')
neg(
    "token-type",
    '{"access_token_type": "urn:ietf:params:oauth:token-type:jwt", "token_type": "Bearer", "expires_in": 3600}',
)
neg(
    "primary-key",
    "class User(Base):\n    id = Column(Integer, primary_key=True)\n    email = Column(String, unique=True)",
)
neg("sort-partition-key", "table:\n  partition_key: tenant_id\n  sort_key: created_at")
neg(
    "keybinding",
    '[{"key": "ctrl+shift+p", "command": "workbench.action.showCommands"}, {"key": "Enter", "when": "inputFocus"}]',
)
neg("api-key-header-name", 'API_KEY_HEADER = "X-API-Key"\napi_key_header: X-API-Key')
neg("ssh-private-key-path", '"ssh_private_key": "~/.ssh/id_ed25519"')
neg("tls-key-path", "tls:\n  cert: /etc/ssl/certs/server.crt\n  private_key: /etc/ssl/private/server.key")
neg(
    "secret-ref",
    "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db-creds\n        key: password",
)
neg("secret-name", "spec:\n  tls:\n    - hosts: [app.example.com]\n      secretName: app-tls")
neg(
    "password-min-length",
    "AUTH_PASSWORD_MIN_LENGTH = 12\nPASSWORD_HASHERS = ['django.contrib.auth.hashers.Argon2PasswordHasher']",
)
neg("password-empty", '{"username": "guest", "password": ""}')
neg("password-env-ref", "environment:\n  POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}\n  POSTGRES_USER: app")
neg("api-key-process-env", "const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY });")
neg("api-key-os-environ", 'api_key = os.environ["OPENAI_API_KEY"]\ntoken = os.getenv("GITHUB_TOKEN")')
neg("token-from-header", 'token = request.headers.get("Authorization", "").removeprefix("Bearer ")')
neg("auth-token-placeholder", '{"authToken": "<your token here>", "endpoint": "https://api.example.com"}')
neg("docker-password-stdin", 'echo "$CR_PAT" | docker login ghcr.io -u USERNAME --password-stdin')
neg("auth-mode", '{"auth": "oauth2", "auth_method": "password", "passwordless": false}')
neg("erb-secret", 'production:\n  secret_key_base: <%= ENV["SECRET_KEY_BASE"] %>')
neg("session-key-field", 'SESSION_KEY_FIELD = "user_id"\nconfig = {"session_cookie_name": "sid"}')
neg(
    "git-commit-sha",
    "commit 3f9c2a1b7d4e5f60718293a4b5c6d7e8f9012345\nAuthor: Dev <dev@example.com>\n\n    fix: token refresh",
)
neg("git-short-sha", "$ git checkout a1b2c3d && git cherry-pick 9e8f7a6b5c4d")
neg("sha256sum", f"$ sha256sum dist/app.tar.gz\n{hashlib.sha256(b'x').hexdigest()}  dist/app.tar.gz")
neg("docker-digest", f"FROM python:3.12-slim@sha256:{hashlib.sha256(b'py').hexdigest()}")
neg(
    "npm-integrity",
    f'"node_modules/lodash": {{\n  "version": "4.17.21",\n  "integrity": "sha512-{base64.b64encode(hashlib.sha512(b"lodash").digest()).decode()}"\n}}',
)
neg(
    "go-sum",
    f"golang.org/x/crypto v0.31.0 h1:{base64.b64encode(hashlib.sha256(b'c').digest()).decode()}\ngolang.org/x/crypto v0.31.0/go.mod h1:{base64.b64encode(hashlib.sha256(b'd').digest()).decode()}",
)
neg(
    "cargo-checksum",
    f'[[package]]\nname = "serde"\nversion = "1.0.215"\nchecksum = "{hashlib.sha256(b"serde").hexdigest()}"',
)
neg("pip-hash", f"requests==2.32.3 --hash=sha256:{hashlib.sha256(b'req').hexdigest()}")
neg(
    "uuid-id",
    f'{{"id": "{uuid.UUID(int=R.getrandbits(128))}", "request_id": "{uuid.UUID(int=R.getrandbits(128))}", "status": "ok"}}',
)
neg(
    "anthropic-message-ids",
    f'{{"id": "msg_01{r(22)}", "type": "message", "content": [{{"type": "tool_use", "id": "toolu_01{r(22)}", "name": "Bash"}}]}}',
)
neg(
    "openai-ids",
    f'{{"id": "chatcmpl-{r(29)}", "object": "chat.completion", "tool_calls": [{{"id": "call_{r(24)}"}}], "response_id": "resp_{r(48, HEX)}"}}',
)
neg("ulid", f"created session 01J{r(23, '0123456789ABCDEFGHJKMNPQRSTVWXYZ')}")
neg("image-data-uri", f'<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAA{b64(120)}=">')
neg(
    "paths",
    "/home/dev/.config/gh/hosts.yml ~/.aws/credentials C:\\Users\\dev\\AppData\\Roaming\\npm\\.npmrc /etc/ssl/private/",
)
neg("placeholder-openai", 'OPENAI_API_KEY=sk-...\nexport OPENAI_API_KEY="sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"')
neg("placeholder-github", "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx  # replace with yours")
neg(
    "password-code",
    "def check_password(raw: str) -> bool:\n    return bcrypt.checkpw(raw.encode(), user.password_hash)\nform.password.data",
)
neg("masked-password", '{"password": "********", "username": "admin"}')
neg("trace-ids", f'trace_id={r(32, HEX)} span_id={r(16, HEX)} level=info msg="request finished"')
neg("token-url", "TOKEN_URL=https://oauth2.googleapis.com/token\ntoken_endpoint: https://login.example.com/oauth/token")
neg("dotenv-ordinary", "DEBUG=true\nPORT=8080\nNODE_ENV=production\nLOG_LEVEL=info\nDATABASE_HOST=db.internal")
neg("public-key-json", f'"publicKey": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b64(43)} dev@laptop"')
neg("authorized-keys", f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{b64(200)} deploy@ci")
neg("certificate", f"-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE{b64(64)}\n{b64(64)}\n-----END CERTIFICATE-----")
neg(
    "public-key-pem", f"-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A{b64(40)}\n-----END PUBLIC KEY-----"
)
neg(
    "git-lfs-pointer",
    f"version https://git-lfs.github.com/spec/v1\noid sha256:{hashlib.sha256(b'lfs').hexdigest()}\nsize 12345",
)
neg("etc-passwd", "root:x:0:0:root:/root:/bin/bash\ndev:x:1000:1000::/home/dev:/bin/zsh")
neg("sshd-config", "PasswordAuthentication no\nPermitRootLogin prohibit-password\nPubkeyAuthentication yes")
neg("css-colors", ".btn { color: #a1b2c3; background: #ff00aa; border-color: #123456; }")
neg(
    "yarn-lock",
    f'lodash@^4.17.21:\n  version "4.17.21"\n  resolved "https://registry.yarnpkg.com/lodash/-/lodash-4.17.21.tgz#{hashlib.sha1(b"l").hexdigest()}"',
)
neg("k8s-uid", f'metadata:\n  uid: {uuid.UUID(int=R.getrandbits(128))}\n  resourceVersion: "{R.randint(10**6, 10**7)}"')
neg("nonce-csp", f"Content-Security-Policy: script-src 'nonce-{b64(22)}'")
neg("webpack-hash", f"main.{r(20, HEX)}.js  vendor.{r(8, HEX)}.chunk.js  asset size 142 KiB")
neg(
    "sentry-dsn-public",
    f"SENTRY_DSN=https://{r(32, HEX)}@o{R.randint(10**5, 10**6)}.ingest.sentry.io/{R.randint(10**6, 10**7)}",
)
neg("build-id", f"BUILD_ID={r(12, HEX)} GIT_SHA={hashlib.sha1(b'g').hexdigest()} VERSION=1.4.2")
neg("pytest-output", "tests/test_auth.py::test_token_refresh PASSED\ntests/test_auth.py::test_password_reset FAILED")
neg("keyring-call", 'password = keyring.get_password("voyager", "dev")\nsecret = vault_client.read(path)["data"]')
neg("func-signature", "async def login(username: str, password: str, otp_token: str | None = None) -> Session:")
neg("ts-interface", "interface Credentials {\n  apiKey: string;\n  secret?: string;\n  token: string | null;\n}")
neg(
    "terraform-var", 'variable "db_password" {\n  type      = string\n  sensitive = true\n}\npassword = var.db_password'
)
neg("github-actions-secret", "env:\n  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n  GITHUB_TOKEN: ${{ github.token }}")
neg("placeholder-angle", "export ANTHROPIC_API_KEY=<your-anthropic-key>\nexport HF_TOKEN=<hf token>")
neg("uuid-list", " ".join(str(uuid.UUID(int=R.getrandbits(128))) for _ in range(4)))
neg(
    "md5-etag",
    f'ETag: "{hashlib.md5(b"e").hexdigest()}"\nContent-MD5: {base64.b64encode(hashlib.md5(b"f").digest()).decode()}',
)
neg("base32-otp-doc", "otpauth://totp/Example:alice@google.com?issuer=Example  # the secret= parameter goes here")
neg(
    "stack-trace",
    'File "/usr/lib/python3.12/site-packages/requests/auth.py", line 95, in __call__\n    r.headers["Authorization"] = _basic_auth_str(self.username, self.password)',
)
neg("token-count-log", "usage: input_tokens=1532 output_tokens=211 cache_read_input_tokens=10240")
neg("key-value-store", 'cache.set(key="user:42:profile", value=payload, ttl=300)\nredis.get("session:key:abc")')
neg("encryption-algo", '{"encryption": "AES-256-GCM", "key_size": 256, "key_derivation": "pbkdf2"}')
neg(
    "gpg-fingerprint",
    "gpg --recv-keys 4AEE18F83AFDEB23\nFingerprint: 5DE3 E050 9C47 EA3C F04A  42D3 4AEE 18F8 3AFD EB23",
)
with open(__file__.rsplit("/", 1)[0] + "/heldout.jsonl", "w") as f:
    for e in out:
        f.write(json.dumps(e, ensure_ascii=False) + "\n")
print(sum(e["kind"] == "secret" for e in out), "secret", sum(e["kind"] == "clean" for e in out), "clean")
