package main

// prose is the seed text for the sentence model. It is written like the notes an
// engineering team leaves behind, so generated sentences read like real cards.
// It avoids colons, quotes and parentheses so sentences stay valid YAML plain
// scalars when they end up in a description.
const prose = `We decided to move the login flow to OIDC with PKCE because enterprise customers will not sign without single sign-on. The old session cookie code has no tests for expiry, so we wrote those first and only then touched the handlers. Access tokens now live fifteen minutes and refresh tokens rotate on every use. A reused refresh token revokes the whole family, which stops a stolen token from being useful for long. Password login stays behind a feature flag for small teams until the end of the year.

The retrieval regression started right after the indexer release went out on Tuesday. Recall on the evaluation set dropped sharply and the support queue filled with tickets about missing results. Bisecting the release with the evaluation as the test took six steps and pointed at the chunker change that merged small sections. That change also removed the heading breadcrumb from each chunk, so words from the headings were no longer searchable. Restoring the breadcrumb brought recall back almost to where it was, and the fix shipped as a patch release the same afternoon.

Deploys follow the runbook that the team agreed after the last incident. The release script builds the images and refuses to run with a dirty tree. Database migrations run as a separate job before any pod changes, and they must stay backward compatible for one release. The canary takes five percent of traffic for thirty minutes while someone watches the error rate and the latency dashboard. If either crosses the threshold we roll back, which usually takes less than two minutes, and we write down what happened before trying again.

The flaky test failed about once in forty runs on the shared runners and never on a laptop. Running it five hundred times inside a container with two processors reproduced it reliably. The cause was expiry stored as whole seconds, so a session could expire almost a second early. We replaced the sleep in the test with an injected clock and stored expiry in milliseconds. The test now finishes in a few milliseconds instead of two seconds and has not failed since.

The benchmark compared keyword search, vector search and the hybrid of both on the full customer mirror. Hybrid ranking with reciprocal rank fusion gave clearly better relevance than either branch alone. Latency is the open problem because the fused query waits for the slower branch. Lowering the number of candidates fetched from each branch cut the tail latency with almost no loss in quality. We will rerun the numbers with a deadline on the vector branch and with the Chinese queries included.

Alice prefers small pull requests that do one thing and answers written as short bullet points. She reviews in one batch in the early afternoon and asks to be consulted before any change to a public endpoint. Chen Wei wants replies in Chinese but code, comments and commit messages in English. Both of them want commands that can be pasted as they are, without placeholders that need guessing. New people on the team get a short onboarding document and a buddy for the first two weeks.

The roadmap meeting settled three bets for the quarter and dropped the mobile app. Single sign-on and hybrid search are committed, while the self-serve installer is a stretch goal. The feature freeze is at the start of September and general availability follows at the end of the month. Headcount stays the same until the next planning cycle, and the budget for embedding jobs is capped every month. Priya will send a summary to the customers in the pilot program after the next check-in.

On-call was noisy last week with dozens of pages and almost none of them needed action. Most alerts resolved themselves within a few minutes, so the thresholds were too tight and the windows too short. We now page on a sustained error ratio and on high tail latency, and disk warnings become tickets instead of pages. The scrape interval was shortened so that alerts fire sooner during a real outage. Every page must link to a runbook section, and alerts without one will be deleted after review.

Rate limiting protects the API from noisy tenants and the token endpoint from credential stuffing. Each tenant gets a token bucket with a steady rate and a small burst, and search requests count double because they cost more. Counters live in the shared cache, and each pod falls back to a local bucket when the cache is unreachable. Clients that exceed the limit receive a clear error with a retry hint instead of a timeout. Enterprise plans will get higher limits once we know how the current ones behave in production.

The local development setup starts the database, the cache and the object store with one command. A seed script loads sample documents, and the first index build takes about a minute and a half. On some laptops the embedding container needs an explicit platform setting because the old image has no native build. The most common problem is a port already taken by another database running on the host. Resetting everything and starting again is usually faster than debugging a broken volume.

Chinese queries regressed for a different reason than the English ones. The new tokenizer splits on spaces and punctuation, so a run of Chinese characters became a single token that almost never matched. Indexing a shadow column with a space between characters and querying Chinese fragments as phrases fixed it without any new dependency. The index grew only a little, and recall on the Chinese evaluation set is now slightly better than before the release. We still need more Chinese queries before general availability.

Weekly reports collect what was finished, what is at risk and what comes next. They link to the cards of the week instead of repeating them, so readers can follow the details when they need to. Risks get an owner and a date, otherwise they are not risks but complaints. The report goes out on Monday morning and the team reads it before the planning meeting. Decisions made in chat are copied into the report so they are not lost when the thread scrolls away.

The market report confirms what sales has been saying for months. Buyers care most about answer quality, then about security and permissions, and only then about price. Almost every large request for proposals requires single sign-on, and self-hosted deployments are growing because of data residency rules. Few vendors publish evaluation numbers, so publishing ours could help in competitive deals. Weak support for Chinese text is a common complaint and an opportunity for us.

Storage costs grew faster than traffic this quarter, mostly because old snapshots were never pruned. We added a retention policy that keeps daily snapshots for two weeks and monthly ones for a year. The backup job now verifies a random sample of restores every night and reports the result to the team channel. Restoring a full tenant takes about twenty minutes on the standby cluster, which is inside the promise we make to customers. The next step is to encrypt the backups with keys that rotate automatically.`

// glossary adds plain technical words that the prose does not use, so the
// vocabulary reaches a realistic size without sounding synthetic.
const glossary = `abstraction accessor acknowledgement adapter addressable admission aggregate aggregation alerting algorithm
allocation allocator allowlist analytics annotation anomaly antipattern appender append-only archive archival assertion
asynchronous attestation attribute audit authenticator authorization autoscaler autoscaling availability backfill
backlog backoff backpressure bandwidth baseline batching benchmark bitmap blob blocklist bloom bookkeeping bootstrap
bottleneck boundary breakpoint broker bucketing buffer buffering bugfix bytecode cadence callback canary capacity
cardinality catalog certificate changelog checkpoint checksum chokepoint ciphertext classifier cleanup clickstream
client clock clustering codec codegen coercion cohort collation collector collision columnar commit compaction
comparator compatibility compiler compliance compression concurrency configuration connector consensus consistency
constraint consumer container contention coordinator coroutine correlation coverage crawler credential cron cursor
dashboard dataset deadline deadlock debounce decoder decommission deduplication default degradation delimiter
dependency deployment deprecation descriptor deserialization diagnostics diff digest directory dispatcher
distribution dockerfile downtime draining drift durability eligibility embedding emitter encoder encryption endpoint
enrichment entitlement entropy enumeration environment ephemeral epoch escalation eviction executor expiry exponent
exporter extension extractor failover fallback fanout feature federation fetcher filesystem filter fingerprint
firewall fixture flag flakiness flamegraph flush footprint formatter fragment framework freshness frontend fsync
fuzzer garbage gateway generator geolocation goroutine granularity graph greedy guardrail handler handshake hashing
header healthcheck heap heartbeat heuristic histogram hotfix hotspot hydration idempotency identifier incident
indexer inference ingestion initializer inode instrumentation integration interceptor interface invalidation
inventory invariant isolation iterator journal keepalive kernel keyspace keyword latency layering leader lease
lexer lifecycle linter listener loadbalancer locale lockfile logger lookup manifest marshaling materialization
memoization mempool merger metadata metric middleware migration mirror mitigation mock monorepo multiplexer
mutation mutex namespace negotiation nightly normalization notifier nullability observability offset onboarding
operator optimizer orchestration outage overflow overhead ownership pagination paginator parser partition patch
payload percentile permission persistence pipeline placeholder planner plugin pointer polling postmortem
precision prefetch preflight preprocessor primitive priority probe profiler projection promotion propagation
protobuf provisioning proxy pruning publisher quantile query queue quorum ranking ratelimit readiness rebalance
rebase recall reconciliation recovery redaction redirect reducer refactor reference regression reindex relevance
replica replication repository reproducer requeue resolver resolution retention retrier retry revocation rollback
rollout rotation router runbook runtime sampler sandbox sanitizer scaffold scheduler schema scoring scraper
segment selector semaphore serializer sharding sidecar signature snapshot socket sorter sparse spillover
staleness standby startup statement stemming storage streaming subscriber substring superset supervisor
suppression synchronization syscall tablespace tagging telemetry template tenant terminator testbed threshold
throttling throughput timeout timestamp tokenizer tombstone topology tracer tracing transaction transcoder
transport traversal trigger truncation tuning typecheck unmarshal upgrade upsert uptime validator vectorizer
vendoring versioning viewport virtualization vocabulary volume watchdog watermark webhook whitelist wildcard
workload workspace wrapper yielding zeroing zone`

// Parts for generated technical tokens: service names, identifiers, metric
// names, config keys and file names, the long tail of a real team's notes.
var (
	svcPrefixes = []string{"auth", "billing", "search", "ledger", "ingest", "notify", "catalog", "payment",
		"invoice", "profile", "session", "gateway", "scheduler", "indexer", "crawler", "router", "export",
		"import", "audit", "quota", "media", "thumbnail", "report", "mailer", "webhook", "tenant", "policy",
		"pricing", "storage", "backup", "ranker", "embedder", "feature", "config", "identity", "checkout",
		"ratings", "geo", "sync", "archive"}
	svcSuffixes = []string{"api", "worker", "gateway", "service", "proxy", "db", "cache", "cron", "sync", "store"}
	identVerbs  = []string{"parse", "flush", "load", "store", "build", "fetch", "apply", "merge", "split",
		"encode", "decode", "resolve", "validate", "normalize", "rotate", "revoke", "refresh", "compact",
		"prune", "index", "rank", "score", "render", "dispatch", "enqueue", "drain", "retry", "open", "close",
		"sync", "scan", "watch", "reload", "migrate", "seed", "export", "import", "hash", "sign", "verify"}
	identNouns = []string{"Config", "Buffer", "Token", "Session", "Index", "Chunk", "Batch", "Query",
		"Result", "Snapshot", "Schema", "Tenant", "Request", "Response", "Header", "Cursor", "Segment",
		"Manifest", "Journal", "Lease", "Quota", "Bucket", "Policy", "Route", "Handler", "Metric", "Span",
		"Document", "Embedding", "Record", "Event", "Message", "Topic", "Partition", "Replica", "Shard",
		"Cache", "Store", "Link", "Note"}
	metricParts = []string{"http_requests", "http_request_duration", "db_queries", "db_pool_wait",
		"cache_hits", "cache_misses", "queue_depth", "queue_latency", "index_chunks", "index_build",
		"search_queries", "search_latency", "token_refresh", "login_attempts", "gc_pause", "goroutines",
		"disk_used", "rss", "rate_limited", "retries"}
	metricSuffixes = []string{"total", "seconds", "bytes", "count", "ratio", "bucket"}
	configKeys     = []string{"ttl_seconds", "max_connections", "batch_size", "timeout_ms", "retry_limit",
		"burst", "rate", "enabled", "sample_rate", "chunk_bytes", "candidate_multiplier", "vector_weight",
		"window_minutes", "max_age_days", "concurrency"}
	fileExts = []string{".go", ".yaml", ".sql", ".json", ".ts", ".py", ".toml", ".md"}
	hostEnvs = []string{"prod", "staging", "dev", "canary", "perf"}
	regions  = []string{"sh", "bj", "fra", "sgp", "iad", "hkg"}
)

// stopwords are never replaced by vocabulary draws, so sentences keep their grammar.
var stopwords = map[string]bool{
	"the": true, "and": true, "that": true, "with": true, "this": true, "from": true, "they": true,
	"them": true, "then": true, "than": true, "have": true, "were": true, "will": true, "what": true,
	"when": true, "which": true, "while": true, "there": true, "their": true, "only": true, "into": true,
	"also": true, "each": true, "every": true, "before": true, "after": true, "because": true,
	"about": true, "almost": true, "without": true, "should": true, "would": true, "could": true,
	"other": true, "some": true, "most": true, "more": true, "less": true, "does": true, "been": true,
	"being": true, "over": true, "under": true, "same": true, "where": true, "once": true, "otherwise": true,
	"until": true, "instead": true, "either": true, "both": true, "just": true, "much": true, "many": true,
	"very": true, "still": true, "now": true, "next": true, "last": true, "first": true, "need": true,
	"needs": true, "usually": true, "clearly": true, "slightly": true, "already": true, "again": true,
	"whole": true, "since": true, "within": true, "those": true, "these": true, "through": true,
}

// Chinese vocabulary: common technical nouns, verbs, states, people and times.
var (
	zhNouns = []string{"登录", "部署", "回滚", "数据库", "索引", "检索", "召回率", "延迟", "服务", "接口",
		"配置", "缓存", "日志", "告警", "迁移", "测试", "发布", "版本", "集群", "节点", "容器", "镜像",
		"队列", "消息", "权限", "令牌", "会话", "用户", "租户", "文档", "分词", "向量", "模型", "评测",
		"基准", "吞吐量", "内存", "磁盘", "网络", "负载均衡", "证书", "密钥", "备份", "监控", "指标",
		"仪表盘", "流水线", "代码审查", "需求", "路线图", "周报", "事故", "复盘", "根因", "补丁", "依赖",
		"脚本", "定时任务", "限流", "熔断", "重试", "超时", "并发", "事务", "主从切换", "分片", "副本",
		"快照", "压缩", "序列化", "协议", "网关", "前端", "后端", "客户端", "灰度发布", "金丝雀", "回归",
		"性能", "稳定性", "可用性", "一致性", "安全", "合规", "审计", "成本", "预算", "排期", "里程碑",
		"交付", "扩容", "存储", "对象存储", "搜索结果", "排序", "相关性", "查询", "标签", "笔记",
		"记忆卡片", "摘要", "知识库", "工作区", "链接", "元数据", "时间戳", "时区", "编码", "单元测试",
		"集成测试", "持续集成", "构建", "环境变量", "特性开关", "数据迁移", "表结构", "索引重建", "冷启动",
		"资源占用", "错误率", "成功率", "响应时间", "峰值", "容量规划", "值班", "告警阈值", "方案", "风险",
		"待办", "评审意见", "上线窗口", "回滚脚本", "健康检查", "连接池", "慢查询", "死锁", "内存泄漏",
		"线程池", "消息积压", "磁盘空间", "配额", "账单", "发票", "支付", "通知", "邮件", "短信", "验证码",
		"密码", "单点登录", "权限模型", "审批流程", "操作手册", "运行手册", "架构图", "时序图", "设计文档",
		"接口文档", "变更记录", "发布说明", "客户反馈", "工单", "需求评审", "技术债", "重构计划", "试点客户",
		"合同", "报价", "市场报告", "竞品", "用户画像", "留存率", "转化率", "活跃用户", "数据看板",
		"埋点", "实验", "灰度比例", "流量", "带宽", "机房", "可用区", "证书续期", "密钥轮换", "访问日志",
		"审计日志", "中文查询", "英文查询", "短语查询", "影子列", "倒排索引", "向量索引", "混合检索",
		"候选集", "重排序", "召回", "准确率", "评测集", "标注数据", "嵌入模型", "推理服务", "显存",
		"批处理", "流处理", "调度器", "爬虫", "导出任务", "导入任务", "对账", "结算", "数据修复"}
	zhVerbs = []string{"排查", "修复", "优化", "重构", "上线", "回滚", "部署", "验证", "评估", "调整",
		"迁移", "拆分", "合并", "监控", "记录", "整理", "确认", "复现", "定位", "补充", "删除", "升级",
		"降级", "重启", "扩容", "压测", "对比", "统计", "分析", "设计", "实现", "测试", "发布", "审查",
		"讨论", "同步", "通知", "跟进", "推迟", "取消", "批准", "评审", "规划", "梳理", "收敛", "清理",
		"归档", "恢复", "备份", "导出", "导入", "重建", "限制", "放开", "切换", "接入", "替换", "保留",
		"观察", "回顾", "简化", "加固", "预热", "隔离", "降低", "提高"}
	zhStates = []string{"稳定", "不稳定", "偏高", "偏低", "正常", "异常", "明显下降", "明显上升", "可控",
		"缓慢", "紧急", "符合预期", "超出预算", "没有变化", "波动很大", "基本恢复"}
	zhPeople = []string{"陈伟", "王芳", "李娜", "张磊", "刘洋", "赵敏", "alice", "bob", "priya", "我们", "团队", "值班同学"}
	zhTimes  = []string{"周一", "周二", "周三", "周四", "周五", "今天上午", "今天下午", "明天", "下周",
		"月底", "上线前", "本周内", "昨晚", "凌晨两点", "这个迭代", "下个季度"}
	zhUnits = []string{"毫秒", "秒", "分钟", "个", "条", "次", "GB", "MB"}
	// zhTemplates are whole sentences; N noun, V verb, S state, P person, T time,
	// D number with a unit, R percentage.
	zhTemplates = []string{
		"P决定先VN，再VN。",
		"N的N从D降到了D。",
		"根据N的结果，N需要在TV。",
		"TP发现NS，原因是N没有V。",
		"这次VN之后，NS。",
		"P建议把N和N分开V，避免影响N。",
		"目前N已经V完成，N还在V中。",
		"如果NS，就先VN，不要直接VN。",
		"N的问题已经V，但N还需要V。",
		"下一步是VN，预计T完成。",
		"P负责VN，P负责VN。",
		"这个N只影响N，不影响N。",
		"我们对比了N和N，最后选择VN。",
		"N目前S，N大约是D。",
		"风险在于N可能S，需要提前VN。",
		"N上线后，N提高了R。",
		"P在T把N的N调整为D。",
		"复盘结论是N和N都要V。",
		"N的N占了R，主要来自N。",
		"T之前必须VN，否则N会S。",
	}
)
