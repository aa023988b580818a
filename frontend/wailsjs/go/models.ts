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

export namespace departments {
	
	export class Defaults {
	    posture?: string;
	    sandbox_mode?: string;
	    network?: boolean;
	    approval_policy?: string;
	    execution_mode?: string;
	
	    static createFrom(source: any = {}) {
	        return new Defaults(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.posture = source["posture"];
	        this.sandbox_mode = source["sandbox_mode"];
	        this.network = source["network"];
	        this.approval_policy = source["approval_policy"];
	        this.execution_mode = source["execution_mode"];
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

}

export namespace desktop {
	
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
	export class DepartmentRow {
	    id: number;
	    name: string;
	    directory: string;
	    defaults: departments.Defaults;
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
	        this.defaults = this.convertValues(source["defaults"], departments.Defaults);
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
	export class LogPiece {
	    run_id: number;
	    start: number;
	    end: number;
	    size: number;
	    data: string;
	    truncated: boolean;
	    missing?: string;
	
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
	    }
	}
	export class RunPage {
	    runs: dispatch.Run[];
	    offset: number;
	    has_more: boolean;
	
	    static createFrom(source: any = {}) {
	        return new RunPage(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.runs = this.convertValues(source["runs"], dispatch.Run);
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
	    offset: number;
	    limit: number;
	
	    static createFrom(source: any = {}) {
	        return new RunQuery(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.task = source["task"];
	        this.status = source["status"];
	        this.offset = source["offset"];
	        this.limit = source["limit"];
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
	export class TaskForm {
	    name: string;
	    argv: string[];
	    cwd: string;
	    schedule: string;
	    time_zone: string;
	    department: string;
	    overrides: departments.Defaults;
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
	        this.cwd = source["cwd"];
	        this.schedule = source["schedule"];
	        this.time_zone = source["time_zone"];
	        this.department = source["department"];
	        this.overrides = this.convertValues(source["overrides"], departments.Defaults);
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
	    cwd: string;
	    schedule: string;
	    time_zone: string;
	    department?: string;
	    overrides: departments.Defaults;
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
	    effective: dispatch.Policy;
	    warnings: string[];
	    last_run?: dispatch.Run;
	
	    static createFrom(source: any = {}) {
	        return new TaskRow(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.name = source["name"];
	        this.argv = source["argv"];
	        this.cwd = source["cwd"];
	        this.schedule = source["schedule"];
	        this.time_zone = source["time_zone"];
	        this.department = source["department"];
	        this.overrides = this.convertValues(source["overrides"], departments.Defaults);
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
	        this.effective = this.convertValues(source["effective"], dispatch.Policy);
	        this.warnings = source["warnings"];
	        this.last_run = this.convertValues(source["last_run"], dispatch.Run);
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
	export class Policy {
	    posture?: string;
	    sandbox_mode: string;
	    network: boolean;
	    approval_policy: string;
	    backend: string;
	    execution_mode: string;
	
	    static createFrom(source: any = {}) {
	        return new Policy(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.posture = source["posture"];
	        this.sandbox_mode = source["sandbox_mode"];
	        this.network = source["network"];
	        this.approval_policy = source["approval_policy"];
	        this.backend = source["backend"];
	        this.execution_mode = source["execution_mode"];
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
	    policy: Policy;
	    policy_override?: Policy;
	    parent_run_id?: number;
	    cwd: string;
	    department?: string;
	    log_path?: string;
	    log_bytes: number;
	    log_truncated: boolean;
	    log_pruned: boolean;
	    paused: boolean;
	    denial?: string;
	    denials?: {[key: string]: number};
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
	        this.policy = this.convertValues(source["policy"], Policy);
	        this.policy_override = this.convertValues(source["policy_override"], Policy);
	        this.parent_run_id = source["parent_run_id"];
	        this.cwd = source["cwd"];
	        this.department = source["department"];
	        this.log_path = source["log_path"];
	        this.log_bytes = source["log_bytes"];
	        this.log_truncated = source["log_truncated"];
	        this.log_pruned = source["log_pruned"];
	        this.paused = source["paused"];
	        this.denial = source["denial"];
	        this.denials = source["denials"];
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

