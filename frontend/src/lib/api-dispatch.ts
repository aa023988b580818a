// Typed access to the Dispatch and Departments façade (app/desktop/dispatchview.go and
// departmentsview.go). Like lib/api.ts, the only importer of the generated bindings for
// these pages: components import from here.
import * as Facade from '../../wailsjs/go/desktop/Facade';
import { api } from '../../wailsjs/go/models';
import { events, Topics } from './events';
import type { Decision } from './decisions';

/** A task as the Dispatch page lists it: schedule in words, next runs, effective policy, warnings, last run. */
export type TaskRow = api.TaskRow;
/** The task editor's content as the core takes it. */
export type TaskForm = Omit<api.TaskForm, 'overrides' | 'convertValues'> & { overrides: Defaults };
/** The schedule field's live preview. */
export type SchedulePreview = api.SchedulePreview;
/** One run (an occurrence of a task, whether it ran or not). */
export type Run = api.Run;
/** A run's effective policy, fixed when it started. */
export type Policy = api.RunPolicy;
/** A page of runs, newest first. */
export type RunPage = api.RunPage;
/** What the Runs view asks for. */
export type RunQuery = { task: string; status: string; offset: number; limit: number; waiting?: boolean };
/** Where a run connected through its egress proxy: one row per domain. */
export type RunNetwork = api.RunNetwork;
/** One domain of a run's network summary. */
export type DomainTraffic = api.DomainTraffic;
/** A piece of a run's log file. */
export type LogPiece = api.LogPiece;
/** A department with its tasks. */
export type DepartmentRow = api.DepartmentRow;
export type Department = api.Department;
/** Defaults of a department, or a task's overrides: unset fields inherit. */
export type Defaults = { profile?: string; posture?: string; sandbox_mode?: string; network?: string | boolean; approval_policy?: string; execution_mode?: string };

export const dispatchApi = {
  tasks: (): Promise<TaskRow[]> => Facade.Tasks(),
  task: (name: string): Promise<TaskRow> => Facade.Task(name),
  createTask: (form: TaskForm): Promise<TaskRow> => Facade.CreateTask(api.TaskForm.createFrom(form)),
  editTask: (name: string, form: TaskForm): Promise<TaskRow> => Facade.EditTask(name, api.TaskForm.createFrom(form)),
  removeTask: (name: string): Promise<void> => Facade.RemoveTask(name),
  setTaskEnabled: (name: string, enabled: boolean): Promise<TaskRow> => Facade.SetTaskEnabled(name, enabled),
  runNow: (name: string): Promise<Run> => Facade.RunNow(name),
  schedulePreview: (expr: string, tz: string): Promise<SchedulePreview> => Facade.SchedulePreview(expr, tz),
  runs: (q: RunQuery): Promise<RunPage> => Facade.Runs(api.RunQuery.createFrom(q)),
  run: (id: number): Promise<Run> => Facade.Run(id),
  /** At most maxBytes of the log ending at end (-1: the end of the file). */
  runLog: (id: number, end = -1, maxBytes = 256 * 1024): Promise<LogPiece> => Facade.RunLog(id, end, maxBytes),
  /** Where run id connected through its egress proxy, per domain (empty for none). */
  runNetwork: (id: number): Promise<RunNetwork> => Facade.RunNetwork(id),
  /** What run id asked Airlock, newest first: who answered, and whether each call ran. */
  runDecisions: (id: number): Promise<Decision[]> => Facade.RunDecisions(id),
  cancelRun: (id: number): Promise<void> => Facade.CancelRun(id),
  resumeRun: (id: number): Promise<void> => Facade.ResumeRun(id),
  /** The system's directory picker; rejects when there is no window (type the path instead). "" when cancelled. */
  chooseDirectory: (title: string, start = ''): Promise<string> => Facade.ChooseDirectory(title, start),
  departments: (): Promise<DepartmentRow[]> => Facade.Departments(),
  addDepartment: (name: string, dir: string, d: Defaults): Promise<Department> => Facade.AddDepartment(name, dir, api.Defaults.createFrom(d)),
  setDepartmentDefaults: (name: string, d: Defaults): Promise<Department> => Facade.SetDepartmentDefaults(name, api.Defaults.createFrom(d)),
  removeDepartment: (name: string): Promise<void> => Facade.RemoveDepartment(name),
  home: (): Promise<string> => Facade.Home(),
};

/** onTaskRemoved calls back when a task is removed (from the window or the CLI). */
export function onTaskRemoved(callback: () => void): () => void {
  return events.on(Topics.TaskRemoved, () => callback());
}
