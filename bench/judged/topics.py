"""The judged set's hand-written session content: topics, their near-duplicate variants, filler.

Owns only text. Each English topic is one kind of real coding work told three times with
different specifics (the near-duplicates): ``{a}`` goes into the person's first prompt,
``{b}`` into a tool's output, ``{c}`` into the agent's closing reply, so the words a person
remembers of a session are spread over different messages. ``bench.judged.corpus`` turns
these into ``synth.Conversation``s; the queries in ``queries.json`` were written by reading
this file and the generated sessions, never by looking at a ranking. Invented text only.
"""

from __future__ import annotations

from typing import NamedTuple


class Topic(NamedTuple):
    key: str
    prompt: str
    command: str
    output: str
    reply: str
    #: (a, b, c) per variant: three sessions on the same topic with different specifics.
    variants: tuple[tuple[str, str, str], ...]


TOPICS: tuple[Topic, ...] = (
    Topic(
        "webhook-retries",
        "The {a} webhook endpoint keeps getting retried and we end up processing the same delivery twice. "
        "Can you find out why the handler is not acknowledging in time?",
        "grep -n 'hooks' logs/app.log | tail -20",
        "POST /hooks/incoming 500 (2113 ms)\nretry attempt 3 scheduled in 40s\n{b}\nPOST /hooks/incoming 200 (87 ms)",
        "The duplicates came from slow acknowledgements. I added an idempotency cache keyed on the delivery id, "
        "stored in {c} with a 24 hour TTL; a repeated delivery now returns 200 without reprocessing.",
        (
            (
                "stripe",
                "psycopg.errors.UniqueViolation: duplicate key value violates unique constraint payments_event_id_key",
                "redis",
            ),
            ("github", "TimeoutError: handler exceeded the 10s acknowledgement deadline", "postgres"),
            ("shopify", "HMAC signature mismatch for X-Shopify-Hmac-Sha256 header", "memcached"),
        ),
    ),
    Topic(
        "flaky-ci",
        "The {a} job on CI fails maybe one run in five and passes on retry. Please figure out what makes it flaky.",
        "pytest -x -q --count=20 tests/",
        "..........F.........\nFAILED {b}\n1 failed, 19 passed in 41.20s",
        "It is an ordering problem, not the runner. I replaced the sleep with {c} so the test waits for the "
        "real condition; forty consecutive runs are green now.",
        (
            (
                "integration",
                "tests/test_orders.py::test_refund_notifies - AssertionError: expected 1 email, got 0",
                "a polling helper",
            ),
            (
                "e2e-browser",
                "tests/e2e/test_login.py::test_redirect - playwright TimeoutError waiting for selector",
                "page.wait_for_url",
            ),
            (
                "nightly",
                "tests/test_report.py::test_totals - sqlite3.OperationalError: database is locked",
                "a threading.Event",
            ),
        ),
    ),
    Topic(
        "migration-column",
        "Write a database migration that adds a {a} column to the accounts table without locking it for long.",
        "alembic upgrade head --sql | head -40",
        "INFO  [alembic.runtime.migration] Running upgrade 4f2a -> 9c1e\nALTER TABLE accounts ADD COLUMN ...\n{b}",
        "Split it into three steps: add the column nullable, backfill in batches of 5000 with {c}, then add the "
        "NOT NULL constraint as NOT VALID and validate it separately.",
        (
            ("timezone", "WARNING: table accounts is 48 GB, estimated rewrite time 23 min", "a server-side cursor"),
            ("billing_tier", "ERROR: column billing_tier contains null values", "an UPDATE ... WHERE id BETWEEN"),
            ("last_login_ip", "NOTICE: lock timeout 2s exceeded, retrying", "pg_sleep between batches"),
        ),
    ),
    Topic(
        "tokenizer-bug",
        "Our tokenizer splits {a} wrongly, search misses documents because of it. Can you fix the tokenizer?",
        "python -m pytest tests/test_tokenizer.py -q",
        "FAILED tests/test_tokenizer.py::test_split\n{b}\n1 failed, 62 passed",
        "The regex treated combining marks as separators. I now normalise to NFC first and use {c}; I added "
        "cases for the inputs from the bug report.",
        (
            (
                "hyphenated words",
                "AssertionError: ['state', 'of', 'the', 'art'] != ['state-of-the-art']",
                "a word-boundary table",
            ),
            ("emoji sequences", "AssertionError: ['👩', '', '💻'] != ['👩\u200d💻']", "the grapheme module"),
            ("accented names", "AssertionError: ['Jose', '\u0301'] != ['José']", "unicodedata.normalize"),
        ),
    ),
    Topic(
        "rate-limiter",
        "Implement a rate limiter for the {a} so a single client cannot exhaust it.",
        "wrk -t4 -c100 -d30s http://localhost:8080/",
        "Running 30s test\n  Requests/sec: 8412.33\n{b}",
        "I used a token bucket per API key kept in {c}; over the limit the server answers 429 with a "
        "Retry-After header. The load test now shows steady latency.",
        (
            ("public API", "Non-2xx or 3xx responses: 51233", "a sliding window in Redis"),
            ("login endpoint", "Socket errors: connect 0, read 311, timeout 97", "an in-process LRU"),
            ("export service", "Latency 99%: 4.81s", "a lua script"),
        ),
    ),
    Topic(
        "memory-leak",
        "The {a} worker's memory grows until the container is killed. Please find the leak.",
        "python -X tracemalloc=25 scripts/profile_worker.py",
        "Top 3 lines\n#1: {b}\n#2: json/decoder.py:353: 12.1 MiB\n#3: logging/__init__.py:1100: 2.0 MiB",
        "The leak was {c}. After the fix the worker stays flat at about 180 MB over 50,000 jobs.",
        (
            (
                "celery",
                "tasks/enrich.py:88: 402.7 MiB (a module-level dict of responses)",
                "an unbounded memo cache, now an lru_cache(maxsize=1024)",
            ),
            ("image resize", "PIL/Image.py:3100: 388.2 MiB", "Image objects never closed, now a with block"),
            (
                "notifications",
                "asyncio/tasks.py:680: 290.4 MiB (pending tasks)",
                "fire-and-forget tasks kept in a set forever",
            ),
        ),
    ),
    Topic(
        "docker-image-size",
        "Our {a} Docker image is huge and slow to pull. Can you shrink it?",
        "docker history --no-trunc app:latest | head",
        "IMAGE  CREATED BY  SIZE\n{b}\n<missing> COPY . /app 412MB",
        "I switched to a multi-stage build with {c} as the runtime base and a .dockerignore; the image went "
        "from 2.1 GB to 190 MB.",
        (
            ("python api", "<missing> RUN pip install -r requirements.txt 1.3GB", "python:3.12-slim"),
            ("node frontend", "<missing> RUN npm install 980MB", "distroless/nodejs"),
            ("rust service", "<missing> RUN cargo build --release 1.7GB", "debian bookworm-slim"),
        ),
    ),
    Topic(
        "jwt-expiry",
        "Users on {a} get logged out randomly. I think it is the JWT handling, please check.",
        "grep -c 'token expired' logs/auth.log && tail -3 logs/auth.log",
        "1843\n{b}",
        "The refresh raced with parallel requests. I added {c} and a 30 second leeway for clock skew; the "
        "forced logouts stopped in staging.",
        (
            (
                "mobile",
                "jwt.exceptions.ExpiredSignatureError: Signature has expired (iat skew 47s)",
                "a single-flight refresh lock",
            ),
            (
                "the admin dashboard",
                "401 refresh_token reused: family revoked",
                "refresh token rotation with a grace window",
            ),
            ("safari", "cookie SameSite=Strict dropped on cross-site redirect", "SameSite=Lax on the refresh cookie"),
        ),
    ),
    Topic(
        "pagination-cursor",
        "The {a} list endpoint skips or repeats rows between pages. Please fix the pagination.",
        "curl -s 'localhost:8000/api/items?limit=50' | jq '.next'",
        "{b}",
        "Offset pagination breaks when rows are inserted. I switched to keyset pagination on {c} with an "
        "opaque base64 cursor, so pages are stable.",
        (
            ("orders", '"eyJvZmZzZXQiOjUwfQ==" (offset 50, but 3 orders inserted meanwhile)', "(created_at, id)"),
            (
                "audit log",
                "null -- page 2 returned 49 rows, duplicate id 88123",
                "the monotonically increasing event id",
            ),
            ("customers", '"page=3" -- sort by name is not unique', "(lower(name), id)"),
        ),
    ),
    Topic(
        "dst-scheduler",
        "The {a} job ran twice last Sunday. I suspect daylight saving time. Can you check the scheduler?",
        "python -c 'from app.sched import next_runs; print(next_runs(\"2026-03-29\"))'",
        "{b}",
        "Cron expressions were evaluated in local time. I store schedules in UTC and convert with {c}; a "
        "test now covers both DST transitions.",
        (
            ("invoice", "[02:30 CET, 02:30 CEST] -- 02:30 occurs twice on 2026-10-25", "zoneinfo"),
            ("backup", "[] -- 02:15 does not exist on 2026-03-29 in Europe/Berlin", "the fold attribute"),
            ("digest email", "[08:00, 09:00] -- both match after the offset change", "pendulum"),
        ),
    ),
    Topic(
        "n-plus-one",
        "The {a} page got really slow. I think we have an N+1 query somewhere.",
        "DJANGO_DEBUG_SQL=1 python manage.py shell -c 'render_page()' | tail -5",
        "{b}\n(1204 queries in 3.88s)",
        "Yes, one query per row for the related objects. Using {c} brings it down to 4 queries and 70 ms.",
        (
            ("dashboard", "SELECT ... FROM projects_owner WHERE id = 4471", "select_related"),
            (
                "invoice list",
                "SELECT ... FROM billing_lineitem WHERE invoice_id = 91",
                "prefetch_related with a Prefetch object",
            ),
            ("team members", "SELECT ... FROM auth_permission WHERE user_id = 3310", "an annotate with Count"),
        ),
    ),
    Topic(
        "upload-race",
        "Sometimes two {a} uploads overwrite each other. Can you look into the race?",
        "python scripts/hammer_uploads.py --parallel 16",
        "ran 1600 uploads\n{b}",
        "Both requests wrote to the same temp name. I now write to a unique temp file and use {c}; the "
        "hammer script shows zero lost files.",
        (
            ("avatar", "lost 37 files: FileExistsError in storage.save", "os.replace for an atomic rename"),
            ("attachment", "lost 12 files: checksum mismatch on read-back", "an advisory flock"),
            ("firmware", "lost 5 files: partial writes, truncated at 65536 bytes", "a content-addressed path"),
        ),
    ),
    Topic(
        "csv-export",
        "The {a} CSV export looks broken when opened in Excel. Please fix the encoding.",
        "file exports/sample.csv && head -c 200 exports/sample.csv | xxd | head -3",
        "{b}",
        "Excel guesses the code page without a BOM. The export now writes {c}, and I added a test that reads it back.",
        (
            ("customer", "exports/sample.csv: UTF-8 Unicode text -- MÃ¼ller shown instead of Müller", "utf-8-sig"),
            (
                "payroll",
                "exports/sample.csv: ISO-8859 text -- semicolon expected by German locale",
                "a semicolon delimiter option",
            ),
            (
                "inventory",
                "exports/sample.csv: CSV text -- leading zeros stripped from SKU 000123",
                "quoted text cells",
            ),
        ),
    ),
    Topic(
        "feature-flag",
        "Roll out the {a} feature behind a flag to 10% of users first.",
        "grep -rn 'flags.is_enabled' src | wc -l",
        "41\n{b}",
        "Added the flag with percentage rollout hashed on user id so a user stays in the same bucket, "
        "configured through {c}, plus a kill switch.",
        (
            ("new checkout", "src/checkout/views.py:12: flags.is_enabled('legacy_cart')", "LaunchDarkly"),
            ("dark mode", "src/ui/theme.ts:5: flags.is_enabled('themes_v1')", "a flags.yaml file"),
            ("bulk import", "src/importer/api.py:77: flags.is_enabled('import_v2')", "environment variables"),
        ),
    ),
    Topic(
        "reindex",
        "Reindexing the {a} search index takes forever. Can you make it faster?",
        "time python manage.py rebuild_index --noinput",
        "{b}\nreal 47m12.3s",
        "The indexer committed after every document. Batching by 2000 and using {c} cut it to under four minutes.",
        (
            ("products", "Indexed 1,204,000 documents (1 commit per document)", "the bulk helper"),
            (
                "support tickets",
                "Elasticsearch refresh_interval=1s during import",
                "refresh_interval -1 during the rebuild",
            ),
            ("wiki", "Segment merges: 8812", "parallel slices"),
        ),
    ),
    Topic(
        "websocket-reconnect",
        "The {a} websocket drops every few minutes and the client never reconnects.",
        "websocat -v ws://localhost:9000/live",
        "[INFO] connected\n{b}\n[INFO] connection closed",
        "The proxy closes idle connections. I added heartbeats every 20 seconds and {c} on the client.",
        (
            (
                "live chart",
                "[WARN] close code 1006 after 60s idle (nginx proxy_read_timeout)",
                "exponential backoff with jitter",
            ),
            ("chat", "[WARN] close code 1001 going away from the load balancer", "resuming from the last message id"),
            ("collaboration editor", "[WARN] ping timeout, no pong for 30s", "a reconnect state machine"),
        ),
    ),
    Topic(
        "oomkilled",
        "The {a} pods keep restarting in Kubernetes. Please find out why.",
        "kubectl describe pod {a}-7d9f -n prod | grep -A3 'Last State'",
        "Last State: Terminated\n{b}\nRestart Count: 14",
        "The limits were too tight for the startup spike. I raised them, set {c}, and the pods have been "
        "stable for a day.",
        (
            ("search", "Reason: OOMKilled, Exit Code: 137", "JVM -XX:MaxRAMPercentage=75"),
            (
                "ingest",
                "Reason: Error, Exit Code: 1 (liveness probe failed: HTTP 503)",
                "a startupProbe with 30 attempts",
            ),
            ("thumbnailer", "Reason: OOMKilled, memory limit 256Mi", "GOMEMLIMIT to 200MiB"),
        ),
    ),
    Topic(
        "terraform-lock",
        "terraform apply for {a} is stuck on a state lock. Can you sort it out safely?",
        "terraform plan -lock-timeout=60s",
        "{b}",
        "A crashed pipeline left the lock. After confirming nothing was running I used {c}, and added a "
        "concurrency group to the pipeline so it cannot happen again.",
        (
            (
                "the staging VPC",
                "Error acquiring the state lock: ConditionalCheckFailedException (DynamoDB)",
                "terraform force-unlock",
            ),
            ("the DNS zones", "Error: state blob is already locked (azurerm backend lease)", "breaking the blob lease"),
            (
                "the CDN config",
                "Lock Info: Who: runner@ci-4412, Operation: OperationTypeApply",
                "a GitLab resource_group",
            ),
        ),
    ),
    Topic(
        "graphql-deprecation",
        "We need to deprecate the {a} field in our GraphQL schema without breaking clients.",
        "npx graphql-inspector diff old.graphql new.graphql",
        "{b}",
        "I marked it @deprecated with a reason, added the replacement field, and set up {c} so we see who "
        "still queries it before removal.",
        (
            (
                "user.fullName",
                "✖ Field fullName was removed from object type User (BREAKING)",
                "field usage metrics in Apollo Studio",
            ),
            (
                "order.total",
                "⚠ Field total changed type from Float to Money (DANGEROUS)",
                "a resolver that logs client names",
            ),
            ("product.images", "✖ Argument size: Int! added to field images (BREAKING)", "persisted query analysis"),
        ),
    ),
    Topic(
        "hydration-mismatch",
        "React complains about a hydration mismatch on the {a}. Please fix it.",
        "npm run build && npm start 2>&1 | grep -i hydrat",
        "{b}",
        "The server and the browser rendered different text. I moved the value into {c} so the first render matches.",
        (
            (
                "pricing page",
                'Warning: Text content did not match. Server: "$1,299.00" Client: "1.299,00 $"',
                "a locale passed from the server",
            ),
            (
                "header",
                "Error: Hydration failed because the initial UI does not match (Date.now in render)",
                "a useEffect",
            ),
            ("sidebar", "Warning: Prop className did not match (localStorage theme)", "a cookie read on the server"),
        ),
    ),
    Topic(
        "pii-logging",
        "Our logs contain {a}. We need redaction before they are shipped.",
        "grep -cE '[A-Za-z0-9._%+-]+@' logs/app.log; grep -m2 'payload' logs/app.log",
        "2291\n{b}",
        "I added a logging filter that masks the sensitive fields with {c}, applied to every handler, and a "
        "test with sample records.",
        (
            ("email addresses", "payload={'email': 'jane.doe@example.com', 'plan': 'pro'}", "a regex allowlist"),
            ("credit card numbers", "payload={'card': '4111111111111111', 'cvc': '123'}", "a Luhn check"),
            ("access tokens", "headers={'Authorization': 'Bearer eyJhbGciOi...'}", "structlog processors"),
        ),
    ),
    Topic(
        "http-backoff",
        "Calls to the {a} fail intermittently. Add retries with backoff to the HTTP client.",
        "python scripts/probe.py --count 500",
        "{b}\n493 ok, 7 failed",
        "Retries now use exponential backoff with full jitter, only for idempotent methods, via {c}; the probe "
        "shows 500 ok.",
        (
            ("geocoding API", "httpx.ConnectError: [Errno 104] Connection reset by peer", "tenacity"),
            ("currency rates service", "503 Service Unavailable (Retry-After: 2)", "urllib3 Retry"),
            ("shipping carrier", "requests.exceptions.ReadTimeout: read timeout=5", "a small retry decorator"),
        ),
    ),
    Topic(
        "cache-stampede",
        "When the {a} cache expires, the database gets hammered. Can you prevent the stampede?",
        "python scripts/loadtest.py --scenario expire",
        "{b}",
        "I added {c} so only one request recomputes while the others get the stale value; database load "
        "stays flat at expiry.",
        (
            (
                "homepage",
                "cache miss storm: 812 concurrent recomputes, db cpu 98%",
                "a lock with stale-while-revalidate",
            ),
            ("leaderboard", "p99 9.2s at key expiry, 340 identical queries", "probabilistic early expiration"),
            ("product catalog", "connection pool exhausted (size 20) at 00:00:00", "request coalescing"),
        ),
    ),
    Topic(
        "email-template",
        "The {a} email renders badly in Outlook. Please fix the template.",
        "python manage.py send_test_email --to qa@example.com --template {a}",
        "{b}",
        "Outlook ignores most CSS. I rewrote the layout with tables and inlined styles with {c}.",
        (
            ("welcome", "sent; litmus report: Outlook 2019 - images stacked vertically", "premailer"),
            ("password reset", "sent; litmus report: button not clickable in Outlook 365", "a VML button"),
            ("weekly digest", "sent; litmus report: dark mode inverts the logo", "mjml"),
        ),
    ),
    Topic(
        "presigned-url",
        "Links to {a} stop working after a while. We use S3 presigned URLs.",
        "aws s3 presign s3://bucket/key --expires-in 604800",
        "{b}",
        "The URLs were signed with temporary credentials that expire sooner. I now generate them on demand "
        "through {c}.",
        (
            ("invoices PDFs", "<Error><Code>ExpiredToken</Code> ... security token expired", "a redirect endpoint"),
            (
                "exported reports",
                "<Code>AccessDenied</Code> Request has expired (X-Amz-Expires=3600)",
                "CloudFront signed cookies",
            ),
            ("profile photos", "<Code>SignatureDoesNotMatch</Code> clock skew 912s", "a short-lived cache of URLs"),
        ),
    ),
    Topic(
        "cron-double-run",
        "The {a} cron job sometimes runs on two hosts at once after the scale-out.",
        "grep '{a}' /var/log/cron.log | tail -4",
        "{b}",
        "Every replica ran the schedule. I added a distributed lock through {c} with a TTL longer than the "
        "job, so only one host runs it.",
        (
            ("cleanup", "host-a: started cleanup\nhost-b: started cleanup (same minute)", "Redis SET NX"),
            ("billing", "host-1 and host-3 both charged subscription 7781", "a Postgres advisory lock"),
            (
                "sitemap",
                "two sitemap.xml uploads 3 seconds apart",
                "a Kubernetes CronJob with concurrencyPolicy Forbid",
            ),
        ),
    ),
    Topic(
        "dependency-upgrade",
        "Upgrading {a} broke a lot of things. Can you get the test suite green again?",
        "pytest -q 2>&1 | tail -5",
        "{b}\n87 failed, 1402 passed",
        "Most failures were one API change. I migrated the code with {c} and pinned the version range.",
        (
            (
                "pydantic to v2",
                "pydantic.errors.PydanticUserError: `Config` is deprecated, use ConfigDict",
                "bump-pydantic",
            ),
            (
                "SQLAlchemy to 2.0",
                "sqlalchemy.exc.ArgumentError: Textual SQL expression should be declared as text()",
                "the 2.0 select() style",
            ),
            ("Django to 5.1", "django.core.exceptions.ImproperlyConfigured: DEFAULT_AUTO_FIELD", "django-upgrade"),
        ),
    ),
    Topic(
        "sql-deadlock",
        "We see deadlocks in the {a} code path under load.",
        "grep -A6 'deadlock detected' logs/postgres.log | head -8",
        "ERROR: deadlock detected\n{b}",
        "Two transactions locked rows in opposite order. I made both lock in id order with {c}, and added a "
        "retry on serialization failures.",
        (
            (
                "transfer",
                "Process 4412 waits for ShareLock on transaction 99120; blocked by process 4415",
                "SELECT ... FOR UPDATE ORDER BY id",
            ),
            (
                "inventory reservation",
                "while updating tuple (12,7) in relation stock_items",
                "one UPDATE with a sorted VALUES list",
            ),
            ("tagging", "while inserting index tuple in relation post_tags_pkey", "INSERT ... ON CONFLICT DO NOTHING"),
        ),
    ),
    Topic(
        "thumbnails",
        "Thumbnail generation for {a} is too slow and sometimes produces black images.",
        "python scripts/bench_thumbs.py samples/",
        "{b}\n120 images in 38.2s",
        "The black images were CMYK JPEGs. I convert to RGB first and use {c}; it now takes 6 seconds.",
        (
            ("product photos", "IMG_2231.jpg: mode CMYK -> black output", "Image.draft for JPEG"),
            ("user avatars", "avatar_88.png: 16-bit PNG, 9000x9000", "pyvips"),
            ("scanned documents", "scan_014.tiff: 600 dpi, 14 pages", "a process pool"),
        ),
    ),
    Topic(
        "cli-args",
        "The {a} command line parsing is confusing. Options after the subcommand are ignored.",
        "python -m tool {a} --verbose --dry-run",
        "{b}",
        "Global options were declared on the parent parser only. I moved them to {c}, and --help now lists them "
        "under each subcommand.",
        (
            (
                "deploy",
                "usage: tool [-h] {deploy,rollback} ...\ntool: error: unrecognized arguments: --verbose",
                "a parent parser shared by subcommands",
            ),
            ("sync", "Error: No such option: --dry-run (click group)", "click's pass_context"),
            ("migrate", "typer.BadParameter: --target expected a value", "a Typer callback"),
        ),
    ),
    Topic(
        "grpc-deadline",
        "Requests from the {a} to the backend fail with gRPC deadline errors.",
        "grpcurl -d '{}' -max-time 5 localhost:50051 api.Backend/Get",
        "{b}",
        "The deadline was not propagated, so downstream calls had none. I pass the remaining deadline along "
        "and tuned {c}.",
        (
            ("gateway", "ERROR: Code: DeadlineExceeded Message: context deadline exceeded", "keepalive pings"),
            (
                "recommendation service",
                "ERROR: Code: Unavailable Message: upstream connect error",
                "the max connection age",
            ),
            (
                "billing worker",
                "ERROR: Code: ResourceExhausted Message: grpc: received message larger than max",
                "max_receive_message_length",
            ),
        ),
    ),
    Topic(
        "tls-renewal",
        "The TLS certificate for {a} expired over the weekend. Why did auto-renewal not work?",
        "sudo certbot renew --dry-run",
        "{b}",
        "Renewal failed silently. I fixed the challenge path, switched to {c}, and added an alert 14 days "
        "before expiry.",
        (
            (
                "api.example.com",
                "Challenge failed for domain api.example.com: 404 on /.well-known/acme-challenge",
                "the DNS-01 challenge",
            ),
            (
                "the internal dashboard",
                "The server could not connect to the client to verify the domain (firewall)",
                "cert-manager",
            ),
            (
                "the mail server",
                "certbot.timer inactive (dead) since the OS upgrade",
                "a systemd timer with Persistent=true",
            ),
        ),
    ),
    Topic(
        "kafka-lag",
        "Consumer lag on the {a} topic keeps growing. Please investigate.",
        "kafka-consumer-groups --bootstrap-server kafka:9092 --describe --group {a}-consumers",
        "{b}",
        "The consumer was rebalancing constantly because processing exceeded max.poll.interval.ms. I moved "
        "the slow work to {c}, and lag is back to zero.",
        (
            ("orders", "LAG 1,204,553 on partition 7; rebalances: 212 in the last hour", "a bounded worker pool"),
            ("clickstream", "LAG 88,120; CURRENT-OFFSET stuck at 44120 (poison message)", "a dead-letter topic"),
            ("payments", "LAG 9,311; consumer-3 has no partitions assigned", "cooperative sticky assignment"),
        ),
    ),
    Topic(
        "password-reset",
        "Security review flagged our {a}. Please harden the password reset flow.",
        "grep -n 'reset' app/auth/views.py",
        "{b}",
        "Tokens are now single-use, random from the secrets module, stored hashed, valid 30 minutes, and I added {c}.",
        (
            ("reset tokens", "88: token = str(user.id) + str(int(time.time()))", "rate limiting per account"),
            ("reset emails", "102: send_mail(...) reveals whether the address exists", "a uniform response message"),
            ("reset links", "95: link uses Host header (host header injection)", "a fixed SITE_URL setting"),
        ),
    ),
    Topic(
        "i18n-plurals",
        "Plural forms are wrong in the {a} translation.",
        "msgfmt --check -o /dev/null locale/{a}/LC_MESSAGES/app.po",
        "{b}",
        "The Plural-Forms header was copied from English. I set the right rule and switched the code to {c}.",
        (
            ("Polish", "app.po:14: nplurals = 2, but CLDR says 3 for pl", "ngettext everywhere"),
            ("Arabic", "app.po:9: message 'item' has 2 plural forms, 6 required", "ICU MessageFormat"),
            ("Russian", "app.po:21: plural form 'один файлов' used for 21", "babel's plural rules"),
        ),
    ),
    Topic(
        "build-cache",
        "Our monorepo CI build for {a} takes 25 minutes. The cache seems useless.",
        "cat ci/logs/build-18812.txt | grep -i cache",
        "{b}",
        "The cache key included a timestamp file. I fixed the key to hash the lockfiles only and enabled "
        "{c}; builds take 6 minutes now.",
        (
            (
                "the web packages",
                "cache miss: key turbo-2026-11-02T10:04 (0 of 148 tasks cached)",
                "Turborepo remote caching",
            ),
            (
                "the bazel targets",
                "INFO: 0 remote cache hits, 4118 local actions",
                "a remote cache with --remote_upload_local_results",
            ),
            ("the gradle modules", "Build cache is disabled (org.gradle.caching=false)", "the Gradle build cache"),
        ),
    ),
    Topic(
        "precommit-slow",
        "The pre-commit hooks take almost a minute on {a}. Can we speed them up?",
        "pre-commit run --all-files --verbose 2>&1 | grep Duration",
        "{b}",
        "Most time went into one hook scanning the whole repo. I replaced it with {c} and restricted hooks to "
        "changed files.",
        (
            ("the backend repo", "- duration: 41.02s (mypy over 2,300 files)", "mypy daemon dmypy"),
            ("every commit", "- duration: 33.5s (pylint)", "ruff"),
            (
                "the docs folder",
                "- duration: 28.1s (markdown link checker, network)",
                "an offline lychee run in CI only",
            ),
        ),
    ),
    Topic(
        "refund-rounding",
        "Partial refunds for {a} are off by a cent sometimes.",
        "python -m pytest tests/test_refunds.py -q",
        "{b}",
        "Amounts went through floats. Everything is now integer minor units, with {c} for the split.",
        (
            ("EUR orders", "AssertionError: 33.33 + 33.33 + 33.33 != 100.00", "the largest remainder method"),
            ("yen payments", "AssertionError: refund of 1000 JPY came out as 999.9999", "currency exponent 0"),
            ("gift cards", "AssertionError: Decimal('9.995') rounded to 9.99 (banker's rounding)", "ROUND_HALF_UP"),
        ),
    ),
    Topic(
        "p99-latency",
        "The load test shows a bad p99 on the {a} endpoint. Please find the cause.",
        "k6 run load/{a}.js",
        "{b}",
        "The tail came from {c}. After the fix p99 is 180 ms at the same load.",
        (
            (
                "search",
                "http_req_duration p(99)=2.91s; GC pause max 1.2s",
                "garbage collector pauses, fixed by reusing buffers",
            ),
            ("checkout", "http_req_duration p(99)=4.40s; db pool wait p99 3.8s", "connection pool starvation"),
            ("upload", "http_req_duration p(99)=6.02s; fsync per chunk", "an fsync on every chunk"),
        ),
    ),
    Topic(
        "lockfile-conflict",
        "I have a merge conflict in {a} after rebasing on main. How do I resolve it cleanly?",
        "git status --short",
        "{b}",
        "Do not hand-merge a lockfile: take main's version and regenerate it with {c}, then run the tests.",
        (
            ("package-lock.json", "UU package-lock.json\nM  package.json", "npm install"),
            ("poetry.lock", "UU poetry.lock\nUU pyproject.toml", "poetry lock --no-update"),
            ("Cargo.lock", "UU Cargo.lock", "cargo update -w"),
        ),
    ),
    # -- added with issue #34's classes: manifests, config and pasted commands, identifiers in code -----------
    Topic(
        "k8s-rollout",
        "The {a} deployment rollout is stuck and the new pods never become ready. Can you check the manifest?",
        "kubectl rollout status deploy/{a} -n prod --timeout=120s",
        "{b}",
        "The readiness probe pointed at a port the container does not listen on. I fixed the port, set {c}, and "
        "the rollout completed.",
        (
            (
                "web-frontend",
                'Waiting for deployment "web-frontend" rollout to finish: 1 of 3 updated replicas are available...\n'
                "metadata:\n  labels:\n    app.kubernetes.io/name: web-frontend\n    label: team/web:env:prod\n"
                "readinessProbe:\n  httpGet: {path: /healthz, port: 8080}",
                "maxUnavailable: 0 in the rollingUpdate strategy",
            ),
            (
                "payments-api",
                'error: deployment "payments-api" exceeded its progress deadline\nkind: Deployment\nspec:\n'
                "  replicas: 4\n  template:\n    spec:\n      containers:\n      - name: payments-api\n"
                "        image: registry.internal/payments-api:2.8.1\n"
                "        envFrom: [{secretRef: {name: payments-db-credentials}}]",
                "progressDeadlineSeconds: 900",
            ),
            (
                "search-indexer",
                'Warning  Unhealthy  kubelet  Readiness probe failed: Get "http://10.2.3.4:9200/_cluster/health": '
                'connection refused\nannotations:\n  prometheus.io/scrape: "true"\n  owner: team/search:tier:backend',
                "initialDelaySeconds: 45 on the readinessProbe",
            ),
        ),
    ),
    Topic(
        "rsync-deploy",
        "Deploying the {a} with rsync deletes files on the server that it should keep.",
        "rsync -avz --delete --exclude-from=.rsyncignore build/ deploy@web1:/srv/{a}/",
        "{b}",
        "The --delete pass removed what is not in build/. I added {c} and a dry run (-n) before the real sync.",
        (
            (
                "marketing-site",
                "deleting uploads/2026/03/hero.png\ndeleting uploads/2026/03/team.jpg\n"
                "sent 48,112 bytes  received 1,204 bytes  total size 91,388,201",
                "--filter='P uploads/'",
            ),
            (
                "docs-portal",
                'rsync: [sender] link_stat "/srv/docs-portal/.well-known" failed: No such file or directory (2)\n'
                "rsync error: some files/attrs were not transferred (code 23)",
                "--exclude=.well-known/ in .rsyncignore",
            ),
            (
                "status-page",
                "deleting incidents/archive.json\n"
                "rsync warning: some files vanished before they could be transferred (code 24)",
                "--backup --backup-dir=/srv/backups/status-page",
            ),
        ),
    ),
    Topic(
        "env-config",
        "The {a} service picks up the wrong settings in staging. Figure out which config source wins.",
        "env | grep -i {a} ; cat config/staging.yaml",
        "{b}",
        "Environment variables were read before the YAML file and the key names differ. I normalised them with "
        "{c} and log the effective settings at startup.",
        (
            (
                "ledger",
                "LEDGER_DATABASE_URL=postgres://ledger@db-staging/ledger\n"
                "databaseUrl: postgres://ledger@db-prod/ledger\nmaxPoolSize: 40\nstatementTimeoutMs: 15000",
                "a SettingsLoader that maps camelCase keys to snake_case",
            ),
            (
                "notifier",
                "NOTIFIER_SMTP_HOST=smtp.staging.local\nsmtpHost: smtp.prod.local\nretryBackoffSeconds: 30\n"
                "enableDigestEmails: true",
                "pydantic-settings with env_prefix NOTIFIER_",
            ),
            (
                "geo-lookup",
                "GEO_LOOKUP_CACHE_TTL=60\ncacheTtlSeconds: 3600\nupstreamBaseUrl: https://geo.internal/v2\n"
                "requestTimeoutMs: 800",
                "one precedence order: defaults, file, environment, flags",
            ),
        ),
    ),
    Topic(
        "batch-writer",
        "The nightly {a} job crashes halfway through and leaves partial rows behind.",
        "python -m jobs.{a} --date 2026-04-02 --dry-run=false",
        "{b}",
        "The job committed chunk by chunk with nothing around the whole run. I switched to {c} and made reruns "
        "idempotent by clearing the day first.",
        (
            (
                "invoice_batch",
                'Traceback (most recent call last):\n  File "jobs/invoice_batch.py", line 212, in run\n'
                '    InvoiceBatchWriter(session).flush_pending()\n  File "billing/writers.py", line 88, in '
                "flush_pending\nsqlalchemy.exc.IntegrityError: duplicate key value violates unique constraint "
                '"invoice_line_items_pkey"',
                "a single SAVEPOINT per chunk",
            ),
            (
                "usage_rollup",
                'Traceback (most recent call last):\n  File "jobs/usage_rollup.py", line 97, in main\n'
                '    aggregate_usage_by_tenant(day)\n  File "metrics/rollup.py", line 141, in '
                "aggregate_usage_by_tenant\nMemoryError: unable to allocate 3.2 GiB for an array with shape "
                "(412000000,)",
                "chunked reads with yield_per(10000)",
            ),
            (
                "payout_sync",
                'Traceback (most recent call last):\n  File "jobs/payout_sync.py", line 64, in sync\n'
                '    StripePayoutClient().list_payouts(created_after=cursor)\n  File "vendors/stripe_client.py", '
                "line 30, in list_payouts\nstripe.error.RateLimitError: Request rate limit exceeded (429)",
                "a resumable cursor kept in payout_sync_state",
            ),
        ),
    ),
    Topic(
        "nginx-upstream",
        "After the {a} change nginx returns 502 for some requests.",
        "sudo nginx -t && tail -n 20 /var/log/nginx/error.log",
        "{b}",
        "The upstream closed connections earlier than nginx expected. I set {c} and the 502s stopped.",
        (
            (
                "TLS",
                "nginx: configuration file /etc/nginx/nginx.conf test is successful\n"
                "2026/05/11 09:12:44 [error] 3121#3121: *88 upstream prematurely closed connection while reading "
                "response header from upstream, client: 10.0.4.17, server: shop.example.com, upstream: "
                '"http://127.0.0.1:8001/cart"',
                "proxy_http_version 1.1 and a keepalive_timeout of 65s on the app side",
            ),
            (
                "gzip",
                "2026/05/11 10:40:02 [error] 3121#3121: *412 recv() failed (104: Connection reset by peer) while "
                'reading upstream, upstream: "http://unix:/run/gunicorn.sock:/api/export"',
                "gunicorn --keep-alive 75",
            ),
            (
                "rate limiting",
                "2026/05/12 07:01:19 [error] 3121#3121: *19 connect() failed (111: Connection refused) while "
                'connecting to upstream, upstream: "http://[::1]:8080/login"',
                "an explicit 127.0.0.1 upstream instead of localhost",
            ),
        ),
    ),
    Topic(
        "perf-bisect",
        "Performance of {a} regressed somewhere in the last 200 commits. Can you bisect it?",
        "git bisect start HEAD v4.2.0 && git bisect run ./scripts/perf_check.sh {a}",
        "{b}",
        "The regression came from {c}. I reverted that part and added the perf check to CI.",
        (
            (
                "report_export",
                "e4c1d9a7 is the first bad commit\ncommit e4c1d9a7f2b3\nAuthor: dev <dev@example.com>\n"
                "    export: stream rows through pandas.DataFrame.to_csv\nbisect found first bad commit",
                "building a whole DataFrame before writing",
            ),
            (
                "image_upload",
                "3b8f00c2 is the first bad commit\n    upload: verify EXIF orientation with Pillow on every request\n"
                "bisect run success",
                "re-reading the whole file to check EXIF",
            ),
            (
                "login_flow",
                "91d2e6b0 is the first bad commit\n    auth: bcrypt rounds from 10 to 14\nbisect run success",
                "raising the bcrypt rounds to 14",
            ),
        ),
    ),
)


class CjkTopic(NamedTuple):
    key: str
    lang: str  # "zh" or "ja"
    prompt: str
    command: str
    output: str
    reply: str
    variants: tuple[tuple[str, str, str], ...]


CJK_TOPICS: tuple[CjkTopic, ...] = (
    CjkTopic(
        "zh-callback",
        "zh",
        "{a}的支付回调一直重复触发，同一个订单被处理了两次，帮我查一下原因。",
        "grep 'callback' logs/pay.log | tail -5",
        "POST /pay/callback 500\n{b}\nretry scheduled",
        "原因是回调处理超时，支付平台重试了。我加了幂等缓存，用{c}保存通知编号，重复的回调直接返回成功。",
        (
            ("订单服务", "超时：处理耗时 12 秒，超过 5 秒限制", "Redis"),
            ("会员服务", "数据库唯一约束冲突 notify_id 重复", "数据库唯一索引"),
            ("退款服务", "签名校验失败 sign mismatch", "本地内存缓存"),
        ),
    ),
    CjkTopic(
        "zh-migration",
        "zh",
        "{a}表的数据库迁移在生产环境失败了，请帮我看看怎么回事。",
        "alembic upgrade head",
        "{b}",
        "问题在于迁移一次性锁住了整张表。我把它拆成三步：先加可空字段，再用{c}分批回填，最后加非空约束。",
        (
            ("用户", "错误：锁等待超时 lock timeout", "后台任务"),
            ("商品", "错误：字段包含空值，不能设置非空", "批量更新脚本"),
            ("日志", "警告：表太大，预计重写需要四十分钟", "游标分页"),
        ),
    ),
    CjkTopic(
        "zh-flaky",
        "zh",
        "持续集成里的{a}测试时好时坏，重跑就通过，帮我找出不稳定的原因。",
        "pytest -q --count=20",
        "{b}\n1 failed, 19 passed",
        "根本原因是测试之间共享状态。我改成{c}，连续跑了五十次都通过了。",
        (
            ("接口", "断言失败：期望状态码 200，实际 429 限流", "每个测试独立的客户端"),
            ("前端", "超时：等待按钮出现超过 30 秒", "显式等待页面加载完成"),
            ("定时任务", "时区错误：凌晨两点的任务没有执行", "固定时钟的测试工具"),
        ),
    ),
    CjkTopic(
        "ja-session",
        "ja",
        "{a}でログインしたユーザーが突然ログアウトされます。セッションの扱いを確認してください。",
        "grep 'expired' logs/auth.log | tail -3",
        "{b}",
        "原因はトークン更新の競合でした。{c}を追加して、同時リクエストでも一度だけ更新するようにしました。",
        (
            ("スマートフォン", "トークン期限切れ：時刻のずれ 47 秒", "更新用のロック"),
            ("管理画面", "リフレッシュトークン再利用を検出しました", "猶予期間付きのローテーション"),
            ("タブレット", "クッキーが保存されていません SameSite", "クッキー設定の変更"),
        ),
    ),
    CjkTopic(
        "ja-reindex",
        "ja",
        "{a}の検索インデックスの再構築がとても遅いです。速くできますか？",
        "time python manage.py rebuild_index",
        "{b}\nreal 52m03s",
        "毎回コミットしていたのが原因です。二千件ずつのバッチ処理と{c}で、四分以内に終わるようになりました。",
        (
            ("商品", "一件ごとにコミットしています", "一括登録"),
            ("問い合わせ", "リフレッシュ間隔が一秒のままです", "再構築中のリフレッシュ停止"),
            ("社内ドキュメント", "セグメントのマージが八千回発生", "並列処理"),
        ),
    ),
    CjkTopic(
        "zh-deploy",
        "zh",
        "{a}的部署一直卡住，新版本的容器起不来，帮我看看配置。",
        "kubectl get pods -n prod | grep -v Running",
        "{b}",
        "原因是健康检查的端口写错了。我改了端口，并把{c}，现在部署正常完成了。",
        (
            ("支付网关", "CrashLoopBackOff 重启次数 12", "启动探针的等待时间调长"),
            ("消息推送", "就绪检查失败 连接被拒绝", "最大不可用数设为零"),
            ("数据报表", "镜像拉取失败 ImagePullBackOff", "镜像仓库的密钥更新"),
        ),
    ),
    CjkTopic(
        "ja-batch",
        "ja",
        "夜間の{a}バッチが途中で落ちて、データが中途半端に残ります。",
        "python -m jobs.nightly --date 2026-04-02",
        "{b}",
        "チャンクごとにコミットしていたのが原因です。{c}にして、再実行しても重複しないようにしました。",
        (
            ("請求書", "一意制約違反 invoice_line_items_pkey", "全体を一つのトランザクション"),
            ("利用量集計", "メモリ不足で強制終了しました", "一万件ずつの分割読み込み"),
            ("支払い同期", "外部APIのレート制限 429", "再開可能なカーソル"),
        ),
    ),
)

#: First prompts of distractor sessions: ordinary work no query targets.
DISTRACTORS: tuple[str, ...] = (
    "Update the README badges and fix the broken link to the contributing guide.",
    "Rename the variable usr to user across the accounts module.",
    "Write the changelog entry for release 3.4.0.",
    "Add type hints to the utils package and make mypy pass.",
    "Set up a GitHub Actions workflow that runs the linters on pull requests.",
    "Explain what this regular expression does: ^(?:[a-z0-9-]+\\.)+[a-z]{2,}$",
    "Convert the settings module from ini files to TOML.",
    "Add a health check endpoint that returns the build version.",
    "Refactor the report generator into smaller functions, it is 400 lines long.",
    "Bump the minimum Python version to 3.11 and drop the compatibility shims.",
    "Create a Makefile with targets for test, lint and format.",
    "Review this pull request for obvious problems before I merge it.",
    "Generate fixtures for the orders tests from the staging snapshot, anonymised.",
    "Remove the dead code in the legacy importer that nobody calls anymore.",
    "Document the public API of the client library with examples.",
)

# -- filler: what sits between the turns a person remembers --------------------------

USER_FILLER_EN: tuple[str, ...] = (
    "ok, go ahead",
    "can you run the whole test suite first?",
    "looks reasonable, continue",
    "what does the current code do there?",
    "hmm, show me the diff",
    "wait, is that file still used anywhere?",
    "fine. keep the change minimal please",
    "did the linter complain?",
    "yes, do that",
)
USER_FILLER_ZH: tuple[str, ...] = (
    "好的，继续",
    "请先把测试全部跑一遍",
    "看起来可以，继续吧",
    "给我看看改动",
    "这个文件还在用吗？",
)
USER_FILLER_JA: tuple[str, ...] = (
    "はい、お願いします",
    "まずテストを全部実行してください",
    "差分を見せてください",
    "その方針で進めてください",
)

ASSISTANT_FILLER_EN: tuple[str, ...] = (
    "Let me look at the relevant code first.",
    "I will run the tests to see the current state.",
    "Reading the module to understand the control flow.",
    "Checking where this function is called from.",
    "The change is small; here is the diff.",
    "Running the linter and the type checker.",
)
ASSISTANT_FILLER_ZH: tuple[str, ...] = ("我先看一下相关代码。", "先运行测试看看现在的状态。", "改动很小，这是差异。")
ASSISTANT_FILLER_JA: tuple[str, ...] = (
    "まず関連するコードを確認します。",
    "テストを実行して現状を確認します。",
    "変更は小さいです。差分はこちらです。",
)

#: (command, output) pairs of ordinary tool use.
TOOL_FILLER: tuple[tuple[str, str], ...] = (
    ("git status --short", " M src/app/settings.py\n M tests/conftest.py\n?? notes.txt"),
    ("ls src/app", "__init__.py\napi.py\nconfig.py\nmodels.py\nservices.py\nutils.py\nviews.py"),
    ("pytest -q", "........................................................\n214 passed in 12.31s"),
    ("ruff check .", "All checks passed!"),
    (
        "git log --oneline -5",
        "a1b2c3d fix typo in docs\n9f8e7d6 bump version\n1234abc refactor config loading\n"
        "77aa88b add tests for parser\nc0ffee1 initial commit",
    ),
    (
        "sed -n 1,30p src/app/config.py",
        "import os\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass Settings:\n    debug: bool = False\n"
        "    database_url: str = os.environ.get('DATABASE_URL', 'sqlite:///dev.db')\n    timeout: float = 10.0\n"
        "    workers: int = 4\n\n\ndef load() -> Settings:\n    return Settings()",
    ),
    (
        "sed -n 40,70p src/app/services.py",
        "def handle(request):\n    payload = request.json()\n    result = process(payload)\n    log.info('handled', extra={'id': result.id})\n"
        "    return Response(status=200)\n\n\ndef process(payload):\n    obj = Model.from_dict(payload)\n    obj.save()\n    return obj",
    ),
    ("mypy src", "Success: no issues found in 48 source files"),
)

REASONING_EN: tuple[str, ...] = (
    "I should check the existing tests before changing behaviour.",
    "The simplest fix is probably local to one function; avoid a broad refactor.",
    "Need to confirm the assumption with the logs before editing.",
)
