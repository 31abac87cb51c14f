;;; mblint-eglot.el --- mblint language server with eglot  -*- lexical-binding: t; -*-

;; Diagnostics, quick fixes and hover from `mblint lsp' on Megatron Bridge
;; YAML configs and launch scripts.  Load this file, then M-x eglot in a
;; YAML or shell buffer (or enable `eglot-ensure' in their hooks, below).
;; eglot is built into Emacs 29; install it from GNU ELPA for Emacs 26-28.

;;; Code:

(require 'eglot)

(defgroup mblint nil "mblint language server." :group 'tools)

(defcustom mblint-program "mblint"
  "Path of the mblint binary."
  :type 'string)

(defcustom mblint-args nil
  "Job options for every lint, e.g. (\"--recipe\" \"llama3_8b_pretrain_config\" \"--gpu\" \"h100\")."
  :type '(repeat string))

(defun mblint-eglot-contact (&optional _interactive)
  "The command eglot runs for mblint."
  (append (list mblint-program "lsp") mblint-args))

;; Slurm batch scripts are shell scripts.
(add-to-list 'auto-mode-alist '("\\.\\(sbatch\\|slurm\\)\\'" . sh-mode))

(add-to-list 'eglot-server-programs
             '((yaml-mode yaml-ts-mode sh-mode bash-ts-mode) . mblint-eglot-contact))

;; Start mblint automatically in YAML and shell buffers:
;;   (add-hook 'yaml-mode-hook #'eglot-ensure)
;;   (add-hook 'sh-mode-hook #'eglot-ensure)

(provide 'mblint-eglot)
;;; mblint-eglot.el ends here
