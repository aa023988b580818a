export namespace api {
	
	export class AgentHook {
	    agent: string;
	    kind: string;
	    installed: boolean;
	    file: string;
	    detail: string;
	    meaning: string;
	    install: string;
	
	    static createFrom(source: any = {}) {
	        return new AgentHook(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.agent = source["agent"];
	        this.kind = source["kind"];
	        this.installed = source["installed"];
	        this.file = source["file"];
	        this.detail = source["detail"];
	        this.meaning = source["meaning"];
	        this.install = source["install"];
	    }
	}
	export class AgentSpec {
	    kind: string;
	    prompt: string;
	    model?: string;
	    api_base?: string;
	    api_key_secret?: string;
	    binary?: string;
	
	    static createFrom(source: any = {}) {
	        return new AgentSpec(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.kind = source["kind"];
	        this.prompt = source["prompt"];
	        this.model = source["model"];
	        this.api_base = source["api_base"];
	        this.api_key_secret = source["api_key_secret"];
	        this.binary = source["binary"];
	    }
	}
	export class PlanArtifactView {
	    id: number;
	    kind: string;
	    source: string;
	    exit_code: number;
	    timed_out?: boolean;
	    truncated?: boolean;
	    size: number;
	    sha256: string;
	    content: string;
	    // Go type: time
	    created_at: any;
	
	    static createFrom(source: any = {}) {
	        return new PlanArtifactView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.kind = source["kind"];
	        this.source = source["source"];
	        this.exit_code = source["exit_code"];
	        this.timed_out = source["timed_out"];
	        this.truncated = source["truncated"];
	        this.size = source["size"];
	        this.sha256 = source["sha256"];
	        this.content = source["content"];
	        this.created_at = this.convertValues(source["created_at"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class ApplyResult {
	    plan_id: string;
	    plan_hash: string;
	    status: string;
	    exit_code: number;
	    timed_out?: boolean;
	    duration_ns: number;
	    output?: PlanArtifactView;
	    snapshot_before?: PlanArtifactView;
	    snapshot_after?: PlanArtifactView;
	    reason?: string;
	
	    static createFrom(source: any = {}) {
	        return new ApplyResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.plan_id = source["plan_id"];
	        this.plan_hash = source["plan_hash"];
	        this.status = source["status"];
	        this.exit_code = source["exit_code"];
	        this.timed_out = source["timed_out"];
	        this.duration_ns = source["duration_ns"];
	        this.output = this.convertValues(source["output"], PlanArtifactView);
	        this.snapshot_before = this.convertValues(source["snapshot_before"], PlanArtifactView);
	        this.snapshot_after = this.convertValues(source["snapshot_after"], PlanArtifactView);
	        this.reason = source["reason"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Approval {
	    id: string;
	    tool: string;
	    summary: string;
	    tier: string;
	    kind?: string;
	    interactive_only: boolean;
	    reasons: string[];
	    scopes: string[];
	    params: string;
	    // Go type: time
	    created_at: any;
	    // Go type: time
	    deadline?: any;
	    session?: string;
	    run?: string;
	    task?: string;
	    department?: string;
	    cwd?: string;
	    mode?: string;
	    network: string;
	    gives?: string;
	
	    static createFrom(source: any = {}) {
	        return new Approval(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.tool = source["tool"];
	        this.summary = source["summary"];
	        this.tier = source["tier"];
	        this.kind = source["kind"];
	        this.interactive_only = source["interactive_only"];
	        this.reasons = source["reasons"];
	        this.scopes = source["scopes"];
	        this.params = source["params"];
	        this.created_at = this.convertValues(source["created_at"], null);
	        this.deadline = this.convertValues(source["deadline"], null);
	        this.session = source["session"];
	        this.run = source["run"];
	        this.task = source["task"];
	        this.department = source["department"];
	        this.cwd = source["cwd"];
	        this.mode = source["mode"];
	        this.network = source["network"];
	        this.gives = source["gives"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class InputDigest {
	    path: string;
	    sha256: string;
	
	    static createFrom(source: any = {}) {
	        return new InputDigest(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.path = source["path"];
	        this.sha256 = source["sha256"];
	    }
	}
	export class OpsAssertion {
	    name?: string;
	    command: string;
	    expect_text?: string;
	    expect_exit?: number;
	
	    static createFrom(source: any = {}) {
	        return new OpsAssertion(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.command = source["command"];
	        this.expect_text = source["expect_text"];
	        this.expect_exit = source["expect_exit"];
	    }
	}
	export class OpsStep {
	    description: string;
	    effect: string;
	    reversibility: string;
	    blast_radius: string;
	    rollback?: string;
	
	    static createFrom(source: any = {}) {
	        return new OpsStep(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.description = source["description"];
	        this.effect = source["effect"];
	        this.reversibility = source["reversibility"];
	        this.blast_radius = source["blast_radius"];
	        this.rollback = source["rollback"];
	    }
	}
	export class OpsTarget {
	    provider: string;
	    account?: string;
	    region?: string;
	    device?: string;
	
	    static createFrom(source: any = {}) {
	        return new OpsTarget(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.provider = source["provider"];
	        this.account = source["account"];
	        this.region = source["region"];
	        this.device = source["device"];
	    }
	}
	export class ApprovalPrompt {
	    plan_id: string;
	    hash: string;
	    status: string;
	    target: OpsTarget;
	    intent: string;
	    apply_command: string;
	    snapshot_command?: string;
	    confirm_command?: string;
	    confirm_within_seconds?: number;
	    workdir: string;
	    network: boolean;
	    steps: OpsStep[];
	    verify: OpsAssertion[];
	    diff?: PlanArtifactView;
	    inputs?: InputDigest[];
	    worst_blast_radius: string;
	    worst_reversibility: string;
	
	    static createFrom(source: any = {}) {
	        return new ApprovalPrompt(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.plan_id = source["plan_id"];
	        this.hash = source["hash"];
	        this.status = source["status"];
	        this.target = this.convertValues(source["target"], OpsTarget);
	        this.intent = source["intent"];
	        this.apply_command = source["apply_command"];
	        this.snapshot_command = source["snapshot_command"];
	        this.confirm_command = source["confirm_command"];
	        this.confirm_within_seconds = source["confirm_within_seconds"];
	        this.workdir = source["workdir"];
	        this.network = source["network"];
	        this.steps = this.convertValues(source["steps"], OpsStep);
	        this.verify = this.convertValues(source["verify"], OpsAssertion);
	        this.diff = this.convertValues(source["diff"], PlanArtifactView);
	        this.inputs = this.convertValues(source["inputs"], InputDigest);
	        this.worst_blast_radius = source["worst_blast_radius"];
	        this.worst_reversibility = source["worst_reversibility"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class ApproveResult {
	    plan_id: string;
	    plan_hash: string;
	    token: string;
	    // Go type: time
	    expires_at: any;
	    diff_sha256: string;
	
	    static createFrom(source: any = {}) {
	        return new ApproveResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.plan_id = source["plan_id"];
	        this.plan_hash = source["plan_hash"];
	        this.token = source["token"];
	        this.expires_at = this.convertValues(source["expires_at"], null);
	        this.diff_sha256 = source["diff_sha256"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class AssertionResult {
	    index: number;
	    name?: string;
	    command: string;
	    passed: boolean;
	    exit_code: number;
	    want_exit: number;
	    expect_text?: string;
	    output: string;
	    sha256: string;
	    reason?: string;
	
	    static createFrom(source: any = {}) {
	        return new AssertionResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.index = source["index"];
	        this.name = source["name"];
	        this.command = source["command"];
	        this.passed = source["passed"];
	        this.exit_code = source["exit_code"];
	        this.want_exit = source["want_exit"];
	        this.expect_text = source["expect_text"];
	        this.output = source["output"];
	        this.sha256 = source["sha256"];
	        this.reason = source["reason"];
	    }
	}
	export class AuditRecord {
	    id: number;
	    request_id: string;
	    tool: string;
	    subject: string;
	    tier: string;
	    verdict: string;
	    layer: string;
	    kind: string;
	    interactive_only: boolean;
	    reasons: string;
	    rule: string;
	    session: string;
	    run: string;
	    task: string;
	    department: string;
	    cwd: string;
	    asked_by: string;
	    answered_by: string;
	    waited_ms: number;
	    // Go type: time
	    created_at: any;
	    call_id?: string;
	    ran?: string;
	    ran_error?: string;
	    // Go type: time
	    ran_at?: any;
	
	    static createFrom(source: any = {}) {
	        return new AuditRecord(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.request_id = source["request_id"];
	        this.tool = source["tool"];
	        this.subject = source["subject"];
	        this.tier = source["tier"];
	        this.verdict = source["verdict"];
	        this.layer = source["layer"];
	        this.kind = source["kind"];
	        this.interactive_only = source["interactive_only"];
	        this.reasons = source["reasons"];
	        this.rule = source["rule"];
	        this.session = source["session"];
	        this.run = source["run"];
	        this.task = source["task"];
	        this.department = source["department"];
	        this.cwd = source["cwd"];
	        this.asked_by = source["asked_by"];
	        this.answered_by = source["answered_by"];
	        this.waited_ms = source["waited_ms"];
	        this.created_at = this.convertValues(source["created_at"], null);
	        this.call_id = source["call_id"];
	        this.ran = source["ran"];
	        this.ran_error = source["ran_error"];
	        this.ran_at = this.convertValues(source["ran_at"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class AuthorizedPlace {
	    id: number;
	    path: string;
	    by: string;
	    // Go type: time
	    authorized_at: any;
	    // Go type: time
	    revoked_at?: any;
	    revoked_by?: string;
	
	    static createFrom(source: any = {}) {
	        return new AuthorizedPlace(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.path = source["path"];
	        this.by = source["by"];
	        this.authorized_at = this.convertValues(source["authorized_at"], null);
	        this.revoked_at = this.convertValues(source["revoked_at"], null);
	        this.revoked_by = source["revoked_by"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Authorization {
	    place?: AuthorizedPlace;
	    path: string;
	    released: number[];
	    needs_confirmation: boolean;
	    confirmation?: string;
	
	    static createFrom(source: any = {}) {
	        return new Authorization(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.place = this.convertValues(source["place"], AuthorizedPlace);
	        this.path = source["path"];
	        this.released = source["released"];
	        this.needs_confirmation = source["needs_confirmation"];
	        this.confirmation = source["confirmation"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class ConfigProblem {
	    line: number;
	    column: number;
	    key?: string;
	    message: string;
	
	    static createFrom(source: any = {}) {
	        return new ConfigProblem(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.line = source["line"];
	        this.column = source["column"];
	        this.key = source["key"];
	        this.message = source["message"];
	    }
	}
	export class ConfigError {
	    path: string;
	    problems: ConfigProblem[];
	
	    static createFrom(source: any = {}) {
	        return new ConfigError(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.path = source["path"];
	        this.problems = this.convertValues(source["problems"], ConfigProblem);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class ConfigPending {
	    keys: string[];
	    digest: string;
	    // Go type: time
	    since: any;
	    message: string;
	
	    static createFrom(source: any = {}) {
	        return new ConfigPending(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.keys = source["keys"];
	        this.digest = source["digest"];
	        this.since = this.convertValues(source["since"], null);
	        this.message = source["message"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class ConfigSetting {
	    key: string;
	    value: any;
	    layer: string;
	    detail?: string;
	
	    static createFrom(source: any = {}) {
	        return new ConfigSetting(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.key = source["key"];
	        this.value = source["value"];
	        this.layer = source["layer"];
	        this.detail = source["detail"];
	    }
	}
	export class ConfigView {
	    path: string;
	    exists: boolean;
	    // Go type: time
	    loaded_at: any;
	    error?: ConfigError;
	    settings: ConfigSetting[];
	    warnings?: string[];
	    pending?: ConfigPending;
	
	    static createFrom(source: any = {}) {
	        return new ConfigView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.path = source["path"];
	        this.exists = source["exists"];
	        this.loaded_at = this.convertValues(source["loaded_at"], null);
	        this.error = this.convertValues(source["error"], ConfigError);
	        this.settings = this.convertValues(source["settings"], ConfigSetting);
	        this.warnings = source["warnings"];
	        this.pending = this.convertValues(source["pending"], ConfigPending);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class ConfirmResult {
	    outcome: string;
	    command: string;
	    exit_code: number;
	    output?: string;
	    sha256?: string;
	    reason?: string;
	    // Go type: time
	    deadline: any;
	
	    static createFrom(source: any = {}) {
	        return new ConfirmResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.outcome = source["outcome"];
	        this.command = source["command"];
	        this.exit_code = source["exit_code"];
	        this.output = source["output"];
	        this.sha256 = source["sha256"];
	        this.reason = source["reason"];
	        this.deadline = this.convertValues(source["deadline"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Limits {
	    memory?: string;
	    pids?: number;
	    cpu?: string;
	
	    static createFrom(source: any = {}) {
	        return new Limits(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.memory = source["memory"];
	        this.pids = source["pids"];
	        this.cpu = source["cpu"];
	    }
	}
	export class Defaults {
	    profile?: string;
	    posture?: string;
	    sandbox_mode?: string;
	    network?: string;
	    approval_policy?: string;
	    execution_mode?: string;
	    limits: Limits;
	
	    static createFrom(source: any = {}) {
	        return new Defaults(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.profile = source["profile"];
	        this.posture = source["posture"];
	        this.sandbox_mode = source["sandbox_mode"];
	        this.network = source["network"];
	        this.approval_policy = source["approval_policy"];
	        this.execution_mode = source["execution_mode"];
	        this.limits = this.convertValues(source["limits"], Limits);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Department {
	    id: number;
	    name: string;
	    directory: string;
	    defaults: Defaults;
	    status: string;
	    status_reason?: string;
	    // Go type: time
	    created_at: any;
	    // Go type: time
	    updated_at: any;
	
	    static createFrom(source: any = {}) {
	        return new Department(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.name = source["name"];
	        this.directory = source["directory"];
	        this.defaults = this.convertValues(source["defaults"], Defaults);
	        this.status = source["status"];
	        this.status_reason = source["status_reason"];
	        this.created_at = this.convertValues(source["created_at"], null);
	        this.updated_at = this.convertValues(source["updated_at"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class DepartmentRow {
	    id: number;
	    name: string;
	    directory: string;
	    defaults: Defaults;
	    status: string;
	    status_reason?: string;
	    // Go type: time
	    created_at: any;
	    // Go type: time
	    updated_at: any;
	    tasks: string[];
	
	    static createFrom(source: any = {}) {
	        return new DepartmentRow(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.name = source["name"];
	        this.directory = source["directory"];
	        this.defaults = this.convertValues(source["defaults"], Defaults);
	        this.status = source["status"];
	        this.status_reason = source["status_reason"];
	        this.created_at = this.convertValues(source["created_at"], null);
	        this.updated_at = this.convertValues(source["updated_at"], null);
	        this.tasks = source["tasks"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class DiffResult {
	    plan_id: string;
	    plan_hash: string;
	    status: string;
	    diff?: PlanArtifactView;
	    inputs?: InputDigest[];
	
	    static createFrom(source: any = {}) {
	        return new DiffResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.plan_id = source["plan_id"];
	        this.plan_hash = source["plan_hash"];
	        this.status = source["status"];
	        this.diff = this.convertValues(source["diff"], PlanArtifactView);
	        this.inputs = this.convertValues(source["inputs"], InputDigest);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class DigestCard {
	    id: number;
	    // Go type: time
	    at: any;
	    // Go type: time
	    since: any;
	    text: string;
	    held_runs: number;
	    missed_runs: number;
	    failed_runs: number;
	    paused_tasks?: string[];
	
	    static createFrom(source: any = {}) {
	        return new DigestCard(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.at = this.convertValues(source["at"], null);
	        this.since = this.convertValues(source["since"], null);
	        this.text = source["text"];
	        this.held_runs = source["held_runs"];
	        this.missed_runs = source["missed_runs"];
	        this.failed_runs = source["failed_runs"];
	        this.paused_tasks = source["paused_tasks"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class DispatchState {
	    paused: boolean;
	    // Go type: time
	    paused_at?: any;
	    paused_by?: string;
	    tasks: number;
	    running: number;
	
	    static createFrom(source: any = {}) {
	        return new DispatchState(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.paused = source["paused"];
	        this.paused_at = this.convertValues(source["paused_at"], null);
	        this.paused_by = source["paused_by"];
	        this.tasks = source["tasks"];
	        this.running = source["running"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class DomainTraffic {
	    domain: string;
	    ports: number[];
	    connections: number;
	    allowed: number;
	    refused: number;
	    asked: number;
	    bytes_up: number;
	    bytes_down: number;
	    duration_ms: number;
	    last_reason: string;
	
	    static createFrom(source: any = {}) {
	        return new DomainTraffic(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.domain = source["domain"];
	        this.ports = source["ports"];
	        this.connections = source["connections"];
	        this.allowed = source["allowed"];
	        this.refused = source["refused"];
	        this.asked = source["asked"];
	        this.bytes_up = source["bytes_up"];
	        this.bytes_down = source["bytes_down"];
	        this.duration_ms = source["duration_ms"];
	        this.last_reason = source["last_reason"];
	    }
	}
	export class Grant {
	    writable?: string[];
	    network?: boolean;
	    readable?: string[];
	
	    static createFrom(source: any = {}) {
	        return new Grant(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.writable = source["writable"];
	        this.network = source["network"];
	        this.readable = source["readable"];
	    }
	}
	export class GrantRecord {
	    id: string;
	    tool: string;
	    pattern: string;
	    scope: string;
	    session: string;
	    task?: string;
	    department: string;
	    workspace: string;
	    created_by: string;
	    request_id: string;
	    // Go type: time
	    created_at: any;
	    // Go type: time
	    revoked_at?: any;
	
	    static createFrom(source: any = {}) {
	        return new GrantRecord(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.tool = source["tool"];
	        this.pattern = source["pattern"];
	        this.scope = source["scope"];
	        this.session = source["session"];
	        this.task = source["task"];
	        this.department = source["department"];
	        this.workspace = source["workspace"];
	        this.created_by = source["created_by"];
	        this.request_id = source["request_id"];
	        this.created_at = this.convertValues(source["created_at"], null);
	        this.revoked_at = this.convertValues(source["revoked_at"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class HookRow {
	    when: string;
	    command: string[];
	    tools: string[];
	    timeout?: string;
	
	    static createFrom(source: any = {}) {
	        return new HookRow(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.when = source["when"];
	        this.command = source["command"];
	        this.tools = source["tools"];
	        this.timeout = source["timeout"];
	    }
	}
	export class HooksView {
	    hooks: HookRow[];
	    agents: AgentHook[];
	
	    static createFrom(source: any = {}) {
	        return new HooksView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.hooks = this.convertValues(source["hooks"], HookRow);
	        this.agents = this.convertValues(source["agents"], AgentHook);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class HostAllowance {
	    by: string;
	    argv: string[];
	    dir: string;
	    // Go type: time
	    at: any;
	
	    static createFrom(source: any = {}) {
	        return new HostAllowance(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.by = source["by"];
	        this.argv = source["argv"];
	        this.dir = source["dir"];
	        this.at = this.convertValues(source["at"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class InboxItem {
	    kind: string;
	    key: string;
	    asked: string;
	    answer: string;
	    actions: string[];
	    tier?: string;
	    runs?: number[];
	    tasks?: string[];
	    dir?: string;
	    // Go type: time
	    since: any;
	    // Go type: time
	    deadline?: any;
	
	    static createFrom(source: any = {}) {
	        return new InboxItem(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.kind = source["kind"];
	        this.key = source["key"];
	        this.asked = source["asked"];
	        this.answer = source["answer"];
	        this.actions = source["actions"];
	        this.tier = source["tier"];
	        this.runs = source["runs"];
	        this.tasks = source["tasks"];
	        this.dir = source["dir"];
	        this.since = this.convertValues(source["since"], null);
	        this.deadline = this.convertValues(source["deadline"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class JournalEntryView {
	    seq: number;
	    id: number;
	    plan_id?: string;
	    event: string;
	    status?: string;
	    actor?: string;
	    at: string;
	    detail?: Record<string, any>;
	    prev_hash: string;
	    hash: string;
	
	    static createFrom(source: any = {}) {
	        return new JournalEntryView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.seq = source["seq"];
	        this.id = source["id"];
	        this.plan_id = source["plan_id"];
	        this.event = source["event"];
	        this.status = source["status"];
	        this.actor = source["actor"];
	        this.at = source["at"];
	        this.detail = source["detail"];
	        this.prev_hash = source["prev_hash"];
	        this.hash = source["hash"];
	    }
	}
	export class JournalProblem {
	    kind: string;
	    seq: number;
	    id: number;
	    detail: string;
	
	    static createFrom(source: any = {}) {
	        return new JournalProblem(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.kind = source["kind"];
	        this.seq = source["seq"];
	        this.id = source["id"];
	        this.detail = source["detail"];
	    }
	}
	export class JournalReport {
	    project: string;
	    entries: number;
	    expected: number;
	    last_seq: number;
	    ok: boolean;
	    problems?: JournalProblem[];
	
	    static createFrom(source: any = {}) {
	        return new JournalReport(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.project = source["project"];
	        this.entries = source["entries"];
	        this.expected = source["expected"];
	        this.last_seq = source["last_seq"];
	        this.ok = source["ok"];
	        this.problems = this.convertValues(source["problems"], JournalProblem);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class JournalPage {
	    project: string;
	    entries: JournalEntryView[];
	    verification?: JournalReport;
	    verify_error?: string;
	
	    static createFrom(source: any = {}) {
	        return new JournalPage(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.project = source["project"];
	        this.entries = this.convertValues(source["entries"], JournalEntryView);
	        this.verification = this.convertValues(source["verification"], JournalReport);
	        this.verify_error = source["verify_error"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	
	export class KeyringView {
	    ok: boolean;
	    error?: string;
	    store: string;
	    where: string;
	
	    static createFrom(source: any = {}) {
	        return new KeyringView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.ok = source["ok"];
	        this.error = source["error"];
	        this.store = source["store"];
	        this.where = source["where"];
	    }
	}
	
	export class LogPiece {
	    run_id: number;
	    start: number;
	    end: number;
	    size: number;
	    data: string;
	    truncated: boolean;
	    missing?: string;
	    pruned?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new LogPiece(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.run_id = source["run_id"];
	        this.start = source["start"];
	        this.end = source["end"];
	        this.size = source["size"];
	        this.data = source["data"];
	        this.truncated = source["truncated"];
	        this.missing = source["missing"];
	        this.pruned = source["pruned"];
	    }
	}
	export class OpsCommand {
	    argv?: string[];
	    shell?: string;
	
	    static createFrom(source: any = {}) {
	        return new OpsCommand(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.argv = source["argv"];
	        this.shell = source["shell"];
	    }
	}
	export class OperationPlan {
	    project: string;
	    target: OpsTarget;
	    intent: string;
	    apply: OpsCommand;
	    snapshot: OpsCommand;
	    diff: OpsCommand;
	    workdir: string;
	    network?: boolean;
	    timeout_seconds?: number;
	    steps: OpsStep[];
	    verify: OpsAssertion[];
	    inputs?: string[];
	    confirm: OpsCommand;
	    confirm_within_seconds?: number;
	
	    static createFrom(source: any = {}) {
	        return new OperationPlan(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.project = source["project"];
	        this.target = this.convertValues(source["target"], OpsTarget);
	        this.intent = source["intent"];
	        this.apply = this.convertValues(source["apply"], OpsCommand);
	        this.snapshot = this.convertValues(source["snapshot"], OpsCommand);
	        this.diff = this.convertValues(source["diff"], OpsCommand);
	        this.workdir = source["workdir"];
	        this.network = source["network"];
	        this.timeout_seconds = source["timeout_seconds"];
	        this.steps = this.convertValues(source["steps"], OpsStep);
	        this.verify = this.convertValues(source["verify"], OpsAssertion);
	        this.inputs = source["inputs"];
	        this.confirm = this.convertValues(source["confirm"], OpsCommand);
	        this.confirm_within_seconds = source["confirm_within_seconds"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	
	
	
	export class Paths {
	    config_file: string;
	    data_dir: string;
	    database: string;
	    run_logs: string;
	    sandbox_dir: string;
	    runtime_dir: string;
	    socket: string;
	    agent_runs: string;
	
	    static createFrom(source: any = {}) {
	        return new Paths(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.config_file = source["config_file"];
	        this.data_dir = source["data_dir"];
	        this.database = source["database"];
	        this.run_logs = source["run_logs"];
	        this.sandbox_dir = source["sandbox_dir"];
	        this.runtime_dir = source["runtime_dir"];
	        this.socket = source["socket"];
	        this.agent_runs = source["agent_runs"];
	    }
	}
	export class ProjectLayer {
	    path: string;
	    applied: string[];
	    ignored: string[];
	
	    static createFrom(source: any = {}) {
	        return new ProjectLayer(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.path = source["path"];
	        this.applied = source["applied"];
	        this.ignored = source["ignored"];
	    }
	}
	export class RuleRow {
	    index: number;
	    tool: string;
	    pattern: string;
	    action: string;
	
	    static createFrom(source: any = {}) {
	        return new RuleRow(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.index = source["index"];
	        this.tool = source["tool"];
	        this.pattern = source["pattern"];
	        this.action = source["action"];
	    }
	}
	export class TierRow {
	    tool: string;
	    tier: string;
	    default: string;
	    from: string;
	    fixed: boolean;
	    warning?: string;
	
	    static createFrom(source: any = {}) {
	        return new TierRow(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.tool = source["tool"];
	        this.tier = source["tier"];
	        this.default = source["default"];
	        this.from = source["from"];
	        this.fixed = source["fixed"];
	        this.warning = source["warning"];
	    }
	}
	export class PermissionsView {
	    approval_policy: string;
	    approval_policy_from: string;
	    reviewer: string;
	    reviewer_from: string;
	    reviewer_command: string[];
	    ops_strict: boolean;
	    ops_strict_from: string;
	    tiers: TierRow[];
	    rules: RuleRow[];
	    grants: GrantRecord[];
	    grants_error?: string;
	    ignored: string[];
	    projects: ProjectLayer[];
	
	    static createFrom(source: any = {}) {
	        return new PermissionsView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.approval_policy = source["approval_policy"];
	        this.approval_policy_from = source["approval_policy_from"];
	        this.reviewer = source["reviewer"];
	        this.reviewer_from = source["reviewer_from"];
	        this.reviewer_command = source["reviewer_command"];
	        this.ops_strict = source["ops_strict"];
	        this.ops_strict_from = source["ops_strict_from"];
	        this.tiers = this.convertValues(source["tiers"], TierRow);
	        this.rules = this.convertValues(source["rules"], RuleRow);
	        this.grants = this.convertValues(source["grants"], GrantRecord);
	        this.grants_error = source["grants_error"];
	        this.ignored = source["ignored"];
	        this.projects = this.convertValues(source["projects"], ProjectLayer);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class VerifyResult {
	    plan_id: string;
	    status: string;
	    assertions: AssertionResult[];
	    confirm?: ConfirmResult;
	
	    static createFrom(source: any = {}) {
	        return new VerifyResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.plan_id = source["plan_id"];
	        this.status = source["status"];
	        this.assertions = this.convertValues(source["assertions"], AssertionResult);
	        this.confirm = this.convertValues(source["confirm"], ConfirmResult);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class PlanTokenView {
	    approved_by?: string;
	    // Go type: time
	    approved_at: any;
	    // Go type: time
	    expires_at: any;
	    used: boolean;
	    revoked: boolean;
	    live: boolean;
	
	    static createFrom(source: any = {}) {
	        return new PlanTokenView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.approved_by = source["approved_by"];
	        this.approved_at = this.convertValues(source["approved_at"], null);
	        this.expires_at = this.convertValues(source["expires_at"], null);
	        this.used = source["used"];
	        this.revoked = source["revoked"];
	        this.live = source["live"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class PlanView {
	    id: string;
	    project: string;
	    hash: string;
	    status: string;
	    plan: OperationPlan;
	    supersedes?: string;
	    superseded_by?: string;
	    created_by?: string;
	    // Go type: time
	    created_at: any;
	    // Go type: time
	    updated_at: any;
	    intact: boolean;
	    diff?: PlanArtifactView;
	    token?: PlanTokenView;
	
	    static createFrom(source: any = {}) {
	        return new PlanView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.project = source["project"];
	        this.hash = source["hash"];
	        this.status = source["status"];
	        this.plan = this.convertValues(source["plan"], OperationPlan);
	        this.supersedes = source["supersedes"];
	        this.superseded_by = source["superseded_by"];
	        this.created_by = source["created_by"];
	        this.created_at = this.convertValues(source["created_at"], null);
	        this.updated_at = this.convertValues(source["updated_at"], null);
	        this.intact = source["intact"];
	        this.diff = this.convertValues(source["diff"], PlanArtifactView);
	        this.token = this.convertValues(source["token"], PlanTokenView);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class PlanDetail {
	    plan?: PlanView;
	    evidence: PlanArtifactView[];
	    verification?: VerifyResult;
	
	    static createFrom(source: any = {}) {
	        return new PlanDetail(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.plan = this.convertValues(source["plan"], PlanView);
	        this.evidence = this.convertValues(source["evidence"], PlanArtifactView);
	        this.verification = this.convertValues(source["verification"], VerifyResult);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class PlanSummary {
	    id: string;
	    project: string;
	    status: string;
	    hash: string;
	    provider: string;
	    account?: string;
	    region?: string;
	    device?: string;
	    intent: string;
	    // Go type: time
	    updated_at: any;
	
	    static createFrom(source: any = {}) {
	        return new PlanSummary(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.project = source["project"];
	        this.status = source["status"];
	        this.hash = source["hash"];
	        this.provider = source["provider"];
	        this.account = source["account"];
	        this.region = source["region"];
	        this.device = source["device"];
	        this.intent = source["intent"];
	        this.updated_at = this.convertValues(source["updated_at"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	
	export class PreviousStart {
	    kind: string;
	    pid: number;
	    // Go type: time
	    started_at: any;
	    // Go type: time
	    stopped_at?: any;
	    clean: boolean;
	
	    static createFrom(source: any = {}) {
	        return new PreviousStart(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.kind = source["kind"];
	        this.pid = source["pid"];
	        this.started_at = this.convertValues(source["started_at"], null);
	        this.stopped_at = this.convertValues(source["stopped_at"], null);
	        this.clean = source["clean"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Profile {
	    name: string;
	    title: string;
	    description: string;
	    warning?: string;
	    sandbox_mode?: string;
	    network?: string;
	    approval_policy?: string;
	    approvals_reviewer?: string;
	    tiers?: {[key: string]: string};
	    source: string;
	
	    static createFrom(source: any = {}) {
	        return new Profile(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.title = source["title"];
	        this.description = source["description"];
	        this.warning = source["warning"];
	        this.sandbox_mode = source["sandbox_mode"];
	        this.network = source["network"];
	        this.approval_policy = source["approval_policy"];
	        this.approvals_reviewer = source["approvals_reviewer"];
	        this.tiers = source["tiers"];
	        this.source = source["source"];
	    }
	}
	export class ProfileList {
	    profiles: Profile[];
	    current: string;
	
	    static createFrom(source: any = {}) {
	        return new ProfileList(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.profiles = this.convertValues(source["profiles"], Profile);
	        this.current = source["current"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class ProofSummary {
	    terminal_proof: string;
	    pam_service?: string;
	    pam_source?: string;
	    pam: boolean;
	    note: string;
	
	    static createFrom(source: any = {}) {
	        return new ProofSummary(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.terminal_proof = source["terminal_proof"];
	        this.pam_service = source["pam_service"];
	        this.pam_source = source["pam_source"];
	        this.pam = source["pam"];
	        this.note = source["note"];
	    }
	}
	
	export class RunPolicy {
	    profile?: string;
	    posture?: string;
	    sandbox_mode: string;
	    network: string;
	    approval_policy: string;
	    backend: string;
	    execution_mode: string;
	    limits: Limits;
	
	    static createFrom(source: any = {}) {
	        return new RunPolicy(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.profile = source["profile"];
	        this.posture = source["posture"];
	        this.sandbox_mode = source["sandbox_mode"];
	        this.network = source["network"];
	        this.approval_policy = source["approval_policy"];
	        this.backend = source["backend"];
	        this.execution_mode = source["execution_mode"];
	        this.limits = this.convertValues(source["limits"], Limits);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Run {
	    id: number;
	    task_id: number;
	    // Go type: time
	    scheduled_at: any;
	    trigger: string;
	    task_name: string;
	    status: string;
	    reason?: string;
	    skip_reason?: string;
	    missed_count?: number;
	    // Go type: time
	    missed_until?: any;
	    catch_up?: string;
	    waiting_dir?: string;
	    waiting_dept?: string;
	    // Go type: time
	    held_since?: any;
	    // Go type: time
	    hold_until?: any;
	    approval_id?: string;
	    // Go type: time
	    started_at?: any;
	    // Go type: time
	    finished_at?: any;
	    exit_code?: number;
	    signal?: string;
	    pid?: number;
	    owner?: string;
	    policy: RunPolicy;
	    policy_override?: RunPolicy;
	    grant?: Grant;
	    parent_run_id?: number;
	    cwd: string;
	    department?: string;
	    log_path?: string;
	    log_bytes: number;
	    log_truncated: boolean;
	    log_pruned: boolean;
	    paused: boolean;
	    waiting_for?: string;
	    denial?: string;
	    denials?: {[key: string]: number};
	    host_allowed?: HostAllowance;
	    // Go type: time
	    created_at: any;
	    // Go type: time
	    updated_at: any;
	
	    static createFrom(source: any = {}) {
	        return new Run(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.task_id = source["task_id"];
	        this.scheduled_at = this.convertValues(source["scheduled_at"], null);
	        this.trigger = source["trigger"];
	        this.task_name = source["task_name"];
	        this.status = source["status"];
	        this.reason = source["reason"];
	        this.skip_reason = source["skip_reason"];
	        this.missed_count = source["missed_count"];
	        this.missed_until = this.convertValues(source["missed_until"], null);
	        this.catch_up = source["catch_up"];
	        this.waiting_dir = source["waiting_dir"];
	        this.waiting_dept = source["waiting_dept"];
	        this.held_since = this.convertValues(source["held_since"], null);
	        this.hold_until = this.convertValues(source["hold_until"], null);
	        this.approval_id = source["approval_id"];
	        this.started_at = this.convertValues(source["started_at"], null);
	        this.finished_at = this.convertValues(source["finished_at"], null);
	        this.exit_code = source["exit_code"];
	        this.signal = source["signal"];
	        this.pid = source["pid"];
	        this.owner = source["owner"];
	        this.policy = this.convertValues(source["policy"], RunPolicy);
	        this.policy_override = this.convertValues(source["policy_override"], RunPolicy);
	        this.grant = this.convertValues(source["grant"], Grant);
	        this.parent_run_id = source["parent_run_id"];
	        this.cwd = source["cwd"];
	        this.department = source["department"];
	        this.log_path = source["log_path"];
	        this.log_bytes = source["log_bytes"];
	        this.log_truncated = source["log_truncated"];
	        this.log_pruned = source["log_pruned"];
	        this.paused = source["paused"];
	        this.waiting_for = source["waiting_for"];
	        this.denial = source["denial"];
	        this.denials = source["denials"];
	        this.host_allowed = this.convertValues(source["host_allowed"], HostAllowance);
	        this.created_at = this.convertValues(source["created_at"], null);
	        this.updated_at = this.convertValues(source["updated_at"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class RunNetwork {
	    run_id: number;
	    domains: DomainTraffic[];
	
	    static createFrom(source: any = {}) {
	        return new RunNetwork(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.run_id = source["run_id"];
	        this.domains = this.convertValues(source["domains"], DomainTraffic);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class RunPage {
	    runs: Run[];
	    offset: number;
	    has_more: boolean;
	
	    static createFrom(source: any = {}) {
	        return new RunPage(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.runs = this.convertValues(source["runs"], Run);
	        this.offset = source["offset"];
	        this.has_more = source["has_more"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class RunQuery {
	    task: string;
	    status: string;
	    waiting: boolean;
	    offset: number;
	    limit: number;
	
	    static createFrom(source: any = {}) {
	        return new RunQuery(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.task = source["task"];
	        this.status = source["status"];
	        this.waiting = source["waiting"];
	        this.offset = source["offset"];
	        this.limit = source["limit"];
	    }
	}
	export class SandboxIndicator {
	    level: string;
	    words: string;
	    reasons?: string[];
	    fix?: string;
	
	    static createFrom(source: any = {}) {
	        return new SandboxIndicator(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.level = source["level"];
	        this.words = source["words"];
	        this.reasons = source["reasons"];
	        this.fix = source["fix"];
	    }
	}
	export class SandboxProbe {
	    name: string;
	    ok: boolean;
	    detail: string;
	    fix?: string;
	
	    static createFrom(source: any = {}) {
	        return new SandboxProbe(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.ok = source["ok"];
	        this.detail = source["detail"];
	        this.fix = source["fix"];
	    }
	}
	export class SandboxStatus {
	    platform: string;
	    probes: SandboxProbe[];
	    requested: string;
	    backend: string;
	    warning?: string;
	    error?: string;
	    guarantees: string[];
	    limitations?: string[];
	    indicator: SandboxIndicator;
	
	    static createFrom(source: any = {}) {
	        return new SandboxStatus(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.platform = source["platform"];
	        this.probes = this.convertValues(source["probes"], SandboxProbe);
	        this.requested = source["requested"];
	        this.backend = source["backend"];
	        this.warning = source["warning"];
	        this.error = source["error"];
	        this.guarantees = source["guarantees"];
	        this.limitations = source["limitations"];
	        this.indicator = this.convertValues(source["indicator"], SandboxIndicator);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class SandboxSummary {
	    backend: string;
	    warning?: string;
	    error?: string;
	    indicator: SandboxIndicator;
	
	    static createFrom(source: any = {}) {
	        return new SandboxSummary(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.backend = source["backend"];
	        this.warning = source["warning"];
	        this.error = source["error"];
	        this.indicator = this.convertValues(source["indicator"], SandboxIndicator);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class SchedulePreview {
	    valid: boolean;
	    description: string;
	    next: string[];
	    error?: string;
	
	    static createFrom(source: any = {}) {
	        return new SchedulePreview(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.valid = source["valid"];
	        this.description = source["description"];
	        this.next = source["next"];
	        this.error = source["error"];
	    }
	}
	export class Status {
	    kind: string;
	    pid: number;
	    version: string;
	    // Go type: time
	    started_at: any;
	    uptime: string;
	    paths: Paths;
	    config: ConfigView;
	    keyring: KeyringView;
	    previous?: PreviousStart;
	    sandbox?: SandboxSummary;
	    approvals?: ProofSummary;
	    attended: boolean;
	    tcp_address?: string;
	    tcp_from?: string;
	
	    static createFrom(source: any = {}) {
	        return new Status(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.kind = source["kind"];
	        this.pid = source["pid"];
	        this.version = source["version"];
	        this.started_at = this.convertValues(source["started_at"], null);
	        this.uptime = source["uptime"];
	        this.paths = this.convertValues(source["paths"], Paths);
	        this.config = this.convertValues(source["config"], ConfigView);
	        this.keyring = this.convertValues(source["keyring"], KeyringView);
	        this.previous = this.convertValues(source["previous"], PreviousStart);
	        this.sandbox = this.convertValues(source["sandbox"], SandboxSummary);
	        this.approvals = this.convertValues(source["approvals"], ProofSummary);
	        this.attended = source["attended"];
	        this.tcp_address = source["tcp_address"];
	        this.tcp_from = source["tcp_from"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class TaskForm {
	    name: string;
	    argv: string[];
	    agent?: AgentSpec;
	    cwd: string;
	    schedule: string;
	    time_zone: string;
	    department: string;
	    overrides: Defaults;
	    env: {[key: string]: string};
	    secrets: string[];
	    timeout: string;
	    no_progress_timeout: string;
	    hold_deadline: string;
	    overlap: string;
	    missed: string;
	    disabled: boolean;
	
	    static createFrom(source: any = {}) {
	        return new TaskForm(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.argv = source["argv"];
	        this.agent = this.convertValues(source["agent"], AgentSpec);
	        this.cwd = source["cwd"];
	        this.schedule = source["schedule"];
	        this.time_zone = source["time_zone"];
	        this.department = source["department"];
	        this.overrides = this.convertValues(source["overrides"], Defaults);
	        this.env = source["env"];
	        this.secrets = source["secrets"];
	        this.timeout = source["timeout"];
	        this.no_progress_timeout = source["no_progress_timeout"];
	        this.hold_deadline = source["hold_deadline"];
	        this.overlap = source["overlap"];
	        this.missed = source["missed"];
	        this.disabled = source["disabled"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class TaskRow {
	    id: number;
	    name: string;
	    argv: string[];
	    agent?: AgentSpec;
	    cwd: string;
	    schedule: string;
	    time_zone: string;
	    department?: string;
	    overrides: Defaults;
	    env?: {[key: string]: string};
	    secrets?: string[];
	    timeout: number;
	    no_progress_timeout: number;
	    overlap: string;
	    missed: string;
	    enabled: boolean;
	    hold_deadline: number;
	    paused: boolean;
	    pause_reason?: string;
	    consecutive_failures: number;
	    // Go type: time
	    last_scheduled_at?: any;
	    // Go type: time
	    created_at: any;
	    // Go type: time
	    updated_at: any;
	    description: string;
	    next_runs: string[];
	    effective: RunPolicy;
	    warnings: string[];
	    last_run?: Run;
	
	    static createFrom(source: any = {}) {
	        return new TaskRow(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.name = source["name"];
	        this.argv = source["argv"];
	        this.agent = this.convertValues(source["agent"], AgentSpec);
	        this.cwd = source["cwd"];
	        this.schedule = source["schedule"];
	        this.time_zone = source["time_zone"];
	        this.department = source["department"];
	        this.overrides = this.convertValues(source["overrides"], Defaults);
	        this.env = source["env"];
	        this.secrets = source["secrets"];
	        this.timeout = source["timeout"];
	        this.no_progress_timeout = source["no_progress_timeout"];
	        this.overlap = source["overlap"];
	        this.missed = source["missed"];
	        this.enabled = source["enabled"];
	        this.hold_deadline = source["hold_deadline"];
	        this.paused = source["paused"];
	        this.pause_reason = source["pause_reason"];
	        this.consecutive_failures = source["consecutive_failures"];
	        this.last_scheduled_at = this.convertValues(source["last_scheduled_at"], null);
	        this.created_at = this.convertValues(source["created_at"], null);
	        this.updated_at = this.convertValues(source["updated_at"], null);
	        this.description = source["description"];
	        this.next_runs = source["next_runs"];
	        this.effective = this.convertValues(source["effective"], RunPolicy);
	        this.warnings = source["warnings"];
	        this.last_run = this.convertValues(source["last_run"], Run);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class VMProgress {
	    stage: string;
	    artifact?: string;
	    received: number;
	    total: number;
	    percent: number;
	
	    static createFrom(source: any = {}) {
	        return new VMProgress(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.stage = source["stage"];
	        this.artifact = source["artifact"];
	        this.received = source["received"];
	        this.total = source["total"];
	        this.percent = source["percent"];
	    }
	}
	export class VMSupport {
	    os: string;
	    arch: string;
	    supported: boolean;
	    reason?: string;
	    kvm: boolean;
	    accel: string;
	    warning?: string;
	    qemu_binary: string;
	    system_qemu?: string;
	    qemu_version?: string;
	
	    static createFrom(source: any = {}) {
	        return new VMSupport(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.os = source["os"];
	        this.arch = source["arch"];
	        this.supported = source["supported"];
	        this.reason = source["reason"];
	        this.kvm = source["kvm"];
	        this.accel = source["accel"];
	        this.warning = source["warning"];
	        this.qemu_binary = source["qemu_binary"];
	        this.system_qemu = source["system_qemu"];
	        this.qemu_version = source["qemu_version"];
	    }
	}
	export class VMStatus {
	    supported: boolean;
	    runtime_ready: boolean;
	    image_ready: boolean;
	    downloading: boolean;
	    progress: VMProgress;
	    error?: string;
	    support: VMSupport;
	    runtime?: string;
	    version?: string;
	
	    static createFrom(source: any = {}) {
	        return new VMStatus(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.supported = source["supported"];
	        this.runtime_ready = source["runtime_ready"];
	        this.image_ready = source["image_ready"];
	        this.downloading = source["downloading"];
	        this.progress = this.convertValues(source["progress"], VMProgress);
	        this.error = source["error"];
	        this.support = this.convertValues(source["support"], VMSupport);
	        this.runtime = source["runtime"];
	        this.version = source["version"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	

}

