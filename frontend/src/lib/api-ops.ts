// Typed access to the Ops façade (app/desktop/opsview.go). The Ops page imports from
// here, never from wailsjs.
import * as Facade from '../../wailsjs/go/desktop/Facade';
import { ClipboardSetText } from '../../wailsjs/runtime/runtime';
import type { api } from '../../wailsjs/go/models';
export type { PlanEvent, JournalEvent } from './ops';

/** A plan with its evidence and newest verification. */
export type PlanDetail = api.PlanDetail;
/** A plan as the core shows it: the plan, its hash, status, latest diff and approval (never the token). */
export type PlanView = api.PlanView;
/** An artifact kept for a plan: a diff, a snapshot, the apply's output, a verify output. */
export type Artifact = api.PlanArtifactView;
/** What the person approves: the hash, the exact command, the steps, the diff. */
export type ApprovalPrompt = api.ApprovalPrompt;
/** The approval: the single-use token, shown once. */
export type Approval = api.ApproveResult;
export type ApplyResult = api.ApplyResult;
export type VerifyResult = api.VerifyResult;
export type AssertionResult = api.AssertionResult;
export type DiffResult = api.DiffResult;
export type Step = api.OpsStep;
export type Journal = api.JournalPage;
export type JournalEntry = api.JournalEntryView;

export const opsApi = {
  plan: (id: string): Promise<PlanDetail> => Facade.OpsPlanDetail(id),
  /** Runs the plan's own diff command read-only and attaches its output. */
  runDiff: (id: string): Promise<DiffResult> => Facade.OpsRunDiff(id),
  prompt: (id: string): Promise<ApprovalPrompt> => Facade.OpsApprovalPrompt(id),
  /** Approves as the person in the window; hash is the full hash the window showed. */
  approve: (id: string, hash: string, ttl: string): Promise<Approval> => Facade.OpsApprove(id, hash, ttl),
  reject: (id: string, reason: string): Promise<PlanView> => Facade.OpsReject(id, reason),
  apply: (id: string, token: string): Promise<ApplyResult> => Facade.OpsApply(id, token),
  verify: (id: string): Promise<VerifyResult> => Facade.OpsVerify(id),
  projects: (): Promise<string[]> => Facade.OpsProjects(),
  journal: (project: string): Promise<Journal> => Facade.OpsJournal(project),
  /** The desktop clipboard, for when the page may not use the browser's. */
  clipboard: (text: string): Promise<boolean> => ClipboardSetText(text),
};
