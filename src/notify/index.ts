export {
  buildFailureClass,
  classifyFailure,
  classifyRenderFailure,
  type FailureClass,
  type FailureKind,
  type FailureScope,
} from './classify-failure';
export type { Notifier, NotifyResult } from './notifier';
