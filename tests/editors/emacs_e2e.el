;;; emacs_e2e.el --- eglot with editors/emacs runs mblint on a launch script  -*- lexical-binding: t; -*-
;; emacs --batch -l emacs_e2e.el (not -Q: Debian's site-start puts elpa-eglot on
;; the load path); env: MBLINT_REPO, MBLINT_BIN, MBLINT_FILE,
;; MBLINT_RULE, MBLINT_RESULT.  Writes "PASS" or "FAIL: why" to MBLINT_RESULT.

(defun e2e-finish (result)
  (with-temp-file (getenv "MBLINT_RESULT") (insert result "\n"))
  (kill-emacs 0))

(defun e2e-rule-diagnostics (rule)
  (seq-filter (lambda (d) (string-match-p (regexp-quote rule) (format "%s" (flymake-diagnostic-text d))))
              (flymake-diagnostics)))

(condition-case err
    (progn
      (load (expand-file-name "editors/emacs/mblint-eglot.el" (getenv "MBLINT_REPO")))
      (setq mblint-program (getenv "MBLINT_BIN"))
      (setq mblint-args '("--recipe" "llama3_8b_pretrain_config"))
      (find-file (getenv "MBLINT_FILE"))
      (unless (eq major-mode 'sh-mode) (e2e-finish (format "FAIL: major mode %s" major-mode)))
      (eglot-ensure)
      ;; eglot-ensure connects from post-command-hook; in batch, connect now.
      (unless (eglot-current-server) (call-interactively #'eglot))
      (let ((deadline (+ (float-time) 30)) found)
        (while (and (not found) (< (float-time) deadline))
          (accept-process-output nil 0.1)
          (setq found (e2e-rule-diagnostics (getenv "MBLINT_RULE"))))
        (if found
            (e2e-finish (format "PASS %s" (flymake-diagnostic-text (car found))))
          (e2e-finish (format "FAIL: no %s diagnostic (server %s, diagnostics %S)" (getenv "MBLINT_RULE")
                              (eglot-current-server) (mapcar #'flymake-diagnostic-text (flymake-diagnostics)))))))
  (error (e2e-finish (format "FAIL: %S" err))))
