export namespace config {
	
	export class Problem {
	    line: number;
	    column: number;
	    key?: string;
	    message: string;
	
	    static createFrom(source: any = {}) {
	        return new Problem(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.line = source["line"];
	        this.column = source["column"];
	        this.key = source["key"];
	        this.message = source["message"];
	    }
	}
	export class Error {
	    path: string;
	    problems: Problem[];
	
	    static createFrom(source: any = {}) {
	        return new Error(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.path = source["path"];
	        this.problems = this.convertValues(source["problems"], Problem);
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
	
	export class Setting {
	    key: string;
	    value: any;
	    layer: string;
	    detail?: string;
	
	    static createFrom(source: any = {}) {
	        return new Setting(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.key = source["key"];
	        this.value = source["value"];
	        this.layer = source["layer"];
	        this.detail = source["detail"];
	    }
	}

}

export namespace desktop {
	
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
	export class Approval {
	    id: string;
	    tool: string;
	    summary: string;
	    tier: string;
	    kind?: string;
	    interactiveOnly: boolean;
	    reasons: string[];
	    scopes: string[];
	    params: string;
	    // Go type: time
	    createdAt: any;
	    // Go type: time
	    deadline?: any;
	    session?: string;
	    run?: string;
	    task?: string;
	    department?: string;
	    cwd?: string;
	    mode?: string;
	    network: boolean;
	
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
	        this.interactiveOnly = source["interactiveOnly"];
	        this.reasons = source["reasons"];
	        this.scopes = source["scopes"];
	        this.params = source["params"];
	        this.createdAt = this.convertValues(source["createdAt"], null);
	        this.deadline = this.convertValues(source["deadline"], null);
	        this.session = source["session"];
	        this.run = source["run"];
	        this.task = source["task"];
	        this.department = source["department"];
	        this.cwd = source["cwd"];
	        this.mode = source["mode"];
	        this.network = source["network"];
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
	    path: string;
	    released: number[];
	    needsConfirmation: boolean;
	    confirmation?: string;
	
	    static createFrom(source: any = {}) {
	        return new Authorization(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.path = source["path"];
	        this.released = source["released"];
	        this.needsConfirmation = source["needsConfirmation"];
	        this.confirmation = source["confirmation"];
	    }
	}
	export class GrantRow {
	    id: string;
	    tool: string;
	    pattern: string;
	    scope: string;
	    session?: string;
	    department?: string;
	    workspace?: string;
	    createdBy: string;
	    createdAt: string;
	
	    static createFrom(source: any = {}) {
	        return new GrantRow(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.tool = source["tool"];
	        this.pattern = source["pattern"];
	        this.scope = source["scope"];
	        this.session = source["session"];
	        this.department = source["department"];
	        this.workspace = source["workspace"];
	        this.createdBy = source["createdBy"];
	        this.createdAt = source["createdAt"];
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
	    }
	}
	export class PermissionsView {
	    approvalPolicy: string;
	    approvalPolicyFrom: string;
	    reviewer: string;
	    reviewerFrom: string;
	    reviewerCommand: string[];
	    opsStrict: boolean;
	    opsStrictFrom: string;
	    tiers: TierRow[];
	    rules: RuleRow[];
	    grants: GrantRow[];
	    grantsError?: string;
	    ignored: string[];
	
	    static createFrom(source: any = {}) {
	        return new PermissionsView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.approvalPolicy = source["approvalPolicy"];
	        this.approvalPolicyFrom = source["approvalPolicyFrom"];
	        this.reviewer = source["reviewer"];
	        this.reviewerFrom = source["reviewerFrom"];
	        this.reviewerCommand = source["reviewerCommand"];
	        this.opsStrict = source["opsStrict"];
	        this.opsStrictFrom = source["opsStrictFrom"];
	        this.tiers = this.convertValues(source["tiers"], TierRow);
	        this.rules = this.convertValues(source["rules"], RuleRow);
	        this.grants = this.convertValues(source["grants"], GrantRow);
	        this.grantsError = source["grantsError"];
	        this.ignored = source["ignored"];
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

export namespace dispatch {
	
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

}

export namespace localapi {
	
	export class ConfigView {
	    path: string;
	    exists: boolean;
	    // Go type: time
	    loadedAt: any;
	    error?: config.Error;
	    settings: config.Setting[];
	
	    static createFrom(source: any = {}) {
	        return new ConfigView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.path = source["path"];
	        this.exists = source["exists"];
	        this.loadedAt = this.convertValues(source["loadedAt"], null);
	        this.error = this.convertValues(source["error"], config.Error);
	        this.settings = this.convertValues(source["settings"], config.Setting);
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
	
	    static createFrom(source: any = {}) {
	        return new KeyringView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.ok = source["ok"];
	        this.error = source["error"];
	    }
	}
	export class PreviousStart {
	    kind: string;
	    pid: number;
	    // Go type: time
	    startedAt: any;
	    // Go type: time
	    stoppedAt?: any;
	    clean: boolean;
	
	    static createFrom(source: any = {}) {
	        return new PreviousStart(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.kind = source["kind"];
	        this.pid = source["pid"];
	        this.startedAt = this.convertValues(source["startedAt"], null);
	        this.stoppedAt = this.convertValues(source["stoppedAt"], null);
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
	export class SandboxSummary {
	    backend: string;
	    warning?: string;
	    error?: string;
	
	    static createFrom(source: any = {}) {
	        return new SandboxSummary(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.backend = source["backend"];
	        this.warning = source["warning"];
	        this.error = source["error"];
	    }
	}
	export class Status {
	    kind: string;
	    pid: number;
	    version: string;
	    // Go type: time
	    startedAt: any;
	    uptime: string;
	    paths: paths.Paths;
	    config: ConfigView;
	    keyring: KeyringView;
	    previous?: PreviousStart;
	    sandbox?: SandboxSummary;
	
	    static createFrom(source: any = {}) {
	        return new Status(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.kind = source["kind"];
	        this.pid = source["pid"];
	        this.version = source["version"];
	        this.startedAt = this.convertValues(source["startedAt"], null);
	        this.uptime = source["uptime"];
	        this.paths = this.convertValues(source["paths"], paths.Paths);
	        this.config = this.convertValues(source["config"], ConfigView);
	        this.keyring = this.convertValues(source["keyring"], KeyringView);
	        this.previous = this.convertValues(source["previous"], PreviousStart);
	        this.sandbox = this.convertValues(source["sandbox"], SandboxSummary);
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

export namespace ops {
	
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

}

export namespace paths {
	
	export class Paths {
	    configFile: string;
	    dataDir: string;
	    database: string;
	    runLogs: string;
	    sandboxDir: string;
	    runtimeDir: string;
	    socket: string;
	
	    static createFrom(source: any = {}) {
	        return new Paths(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.configFile = source["configFile"];
	        this.dataDir = source["dataDir"];
	        this.database = source["database"];
	        this.runLogs = source["runLogs"];
	        this.sandboxDir = source["sandboxDir"];
	        this.runtimeDir = source["runtimeDir"];
	        this.socket = source["socket"];
	    }
	}

}

export namespace sandbox {
	
	export class Probe {
	    name: string;
	    ok: boolean;
	    detail: string;
	    fix?: string;
	
	    static createFrom(source: any = {}) {
	        return new Probe(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.ok = source["ok"];
	        this.detail = source["detail"];
	        this.fix = source["fix"];
	    }
	}
	export class Status {
	    platform: string;
	    probes: Probe[];
	    requested: string;
	    backend: string;
	    warning?: string;
	    error?: string;
	    guarantees: string[];
	    limitations?: string[];
	
	    static createFrom(source: any = {}) {
	        return new Status(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.platform = source["platform"];
	        this.probes = this.convertValues(source["probes"], Probe);
	        this.requested = source["requested"];
	        this.backend = source["backend"];
	        this.warning = source["warning"];
	        this.error = source["error"];
	        this.guarantees = source["guarantees"];
	        this.limitations = source["limitations"];
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

export namespace vminstall {
	
	export class Progress {
	    stage: string;
	    artifact?: string;
	    received: number;
	    total: number;
	    percent: number;
	
	    static createFrom(source: any = {}) {
	        return new Progress(source);
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
	export class Support {
	    os: string;
	    arch: string;
	    supported: boolean;
	    reason?: string;
	    kvm: boolean;
	    accel: string;
	    warning?: string;
	    qemuBinary: string;
	    systemQemu?: string;
	    qemuVersion?: string;
	
	    static createFrom(source: any = {}) {
	        return new Support(source);
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
	        this.qemuBinary = source["qemuBinary"];
	        this.systemQemu = source["systemQemu"];
	        this.qemuVersion = source["qemuVersion"];
	    }
	}
	export class Status {
	    supported: boolean;
	    runtimeReady: boolean;
	    imageReady: boolean;
	    downloading: boolean;
	    progress: Progress;
	    error?: string;
	    support: Support;
	    runtime?: string;
	    version?: string;
	
	    static createFrom(source: any = {}) {
	        return new Status(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.supported = source["supported"];
	        this.runtimeReady = source["runtimeReady"];
	        this.imageReady = source["imageReady"];
	        this.downloading = source["downloading"];
	        this.progress = this.convertValues(source["progress"], Progress);
	        this.error = source["error"];
	        this.support = this.convertValues(source["support"], Support);
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

