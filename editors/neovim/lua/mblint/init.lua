-- mblint language server for Neovim: diagnostics, quick fixes and hover on
-- Megatron Bridge YAML configs and launch scripts (yaml and sh buffers).
--
--   require('mblint').setup()                       -- mblint on $PATH
--   require('mblint').setup({ cmd = { '/path/to/mblint', 'lsp' } })
--
-- Neovim 0.8+ uses vim.lsp.start; 0.7 uses vim.lsp.start_client with an
-- autocmd (Debian 12 ships 0.7.2).
local M = {}

M.defaults = {
  cmd = { 'mblint', 'lsp' },
  filetypes = { 'yaml', 'sh' },
  -- A directory holding one of these is the workspace mblint scans for the
  -- launch script that runs an open override YAML.
  root_markers = { '.git', '.mblint.yaml' },
}

local function dirname(path)
  return vim.fn.fnamemodify(path, ':h')
end

-- The nearest parent directory with a root marker, else the file's directory.
local function find_root(path, markers)
  local dir = dirname(path)
  while true do
    for _, marker in ipairs(markers) do
      if vim.loop.fs_stat(dir .. '/' .. marker) then
        return dir
      end
    end
    local parent = dirname(dir)
    if parent == dir then
      return dirname(path)
    end
    dir = parent
  end
end

local function client_config(opts, root)
  return {
    name = 'mblint',
    cmd = opts.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
  }
end

-- Neovim 0.8+: vim.lsp.start reuses a running client with the same name and root.
local function attach_start(bufnr, opts, root)
  vim.lsp.start(client_config(opts, root), { bufnr = bufnr })
end

-- Neovim 0.7: one client per root, started with vim.lsp.start_client and
-- attached to each buffer with vim.lsp.buf_attach_client.
local clients = {}
local function attach_start_client(bufnr, opts, root)
  local id = clients[root]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(client_config(opts, root))
    if not id then
      return
    end
    clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
end

function M.attach(bufnr, opts)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or vim.bo[bufnr].buftype ~= '' then
    return
  end
  local root = find_root(name, opts.root_markers)
  if vim.lsp.start and not opts.force_start_client then
    attach_start(bufnr, opts, root)
  else
    attach_start_client(bufnr, opts, root)
  end
end

function M.setup(user)
  local opts = vim.tbl_deep_extend('force', M.defaults, user or {})
  local group = vim.api.nvim_create_augroup('mblint_lsp', { clear = true })
  -- Slurm batch scripts are shell scripts.
  vim.api.nvim_create_autocmd({ 'BufRead', 'BufNewFile' }, {
    group = group,
    pattern = { '*.sbatch', '*.slurm' },
    command = 'setfiletype sh',
  })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = opts.filetypes,
    callback = function(args)
      M.attach(args.buf, opts)
    end,
  })
end

return M
